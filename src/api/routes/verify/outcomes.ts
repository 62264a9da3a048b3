/**
 * `POST /v1/verify/outcomes` (scope `outcomes:write`, which only payment-side organizations
 * hold, and only for agreements that name the caller's organization as a party): records a
 * later outcome of an allowed action in the agreement's ledger (src/store/ledger/outcome.ts):
 * `allowed -> authorized -> settled`, `allowed | authorized -> failed`; `failed` releases the
 * amount from the budgets. The agent's operator cannot record outcomes at all, so it can never
 * release its own spend. Parties: an acknowledgement names the caller's organization only when
 * signed by a live key that organization registered (src/store/ack-keys.ts); docs/verify.md,
 * "Who records outcomes".
 *
 * The agreement is addressed by `agreement_id` and, when the caller is a party of agreements
 * of several agents stored under that id (two organizations may each hold an id), by the
 * optional `agent_id`: without it such a request is 409 RECORD_ID_AMBIGUOUS.
 *
 * Answers 200 `{agreement_id, action_id, outcome, replayed, entry}` (`replayed` true when the
 * action already had that outcome: nothing appended); 403 a key without `outcomes:write`; 404
 * `agreement was not found` (unknown, or the caller is not its party: the same answer), 404
 * `action is not recorded as allowed in the agreement's ledger`, 409 `outcome <x> cannot
 * follow <y>`. An outcome that lowers a total drops this process's verify snapshot of the
 * agent before it answers, so a verify right after it sees the room it freed.
 *
 * Hold steps (src/core/agreement/holds.ts, src/store/ledger/holds.ts; docs/verify.md "Holds,
 * captures and refunds"): `captured` (amount, idempotency_key, final?), `voided`, `refunded`
 * (amount, idempotency_key). They answer the same members plus `entries` (every entry the step
 * appended: a final capture's release, a restoring refund's release) and `hold` (held, captured,
 * refunded, counted, open); 400 a missing or unusable amount or key, 409 `capture exceeds ...`,
 * `refund exceeds ...`, a key reused for another step, or a step the hold's state refuses.
 */
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { releasesBudget, type LaterOutcome } from "../../../core/agreement/index.js";
import { formatMinor } from "../../../core/money/index.js";
import { textSchema } from "../../../core/schemas/index.js";
import { paymentParties, loadAgreementRecords, recordHoldStep, recordOutcome, type HoldStepInput } from "../../../store/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { keyCredential } from "../../plugins/auth.js";
import { theVisibleOne } from "../shared/visible-one.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";

/** The hold steps the payment side records (src/core/agreement/holds.ts); `expired` is the service's own. */
type StepOutcome = "captured" | "voided" | "refunded";

interface OutcomeBody {
  agreement_id: string;
  agent_id?: string;
  action_id: string;
  outcome: LaterOutcome | StepOutcome;
  /** captured, refunded: the step's amount in major units of the action's currency. */
  amount?: number;
  /** captured: the capture is the last one; the rest of the hold is released. */
  final?: boolean;
  /** captured, refunded: the payment side's key of the step (a repeat answers the same; another step under it is a 409). */
  idempotency_key?: string;
}

const STEPS: ReadonlySet<string> = new Set<StepOutcome>(["captured", "voided", "refunded"]);

const holdSchema = {
  type: "object",
  description:
    "The action's hold after the step, decimal strings in its currency: held (the ALLOW), captured, refunded, counted (what its budgets count), open.",
  properties: {
    currency: { type: "string" },
    held: { type: "string" },
    captured: { type: "string" },
    refunded: { type: "string" },
    counted: { type: "string" },
    open: { type: "boolean" },
  },
} as const;

const id = textSchema({ minLength: 1, maxLength: 256 });

const entrySchema = {
  type: "object",
  properties: {
    action_id: { type: "string" },
    at: { type: "string" },
    currency: { type: "string" },
    outcome: { type: "string" },
    sequence: { type: "integer" },
    entry_hash: { type: "string" },
    amount: { type: "number" },
    idempotency_key: { type: "string" },
    intent_id: { type: "string" },
    prev_entry_hash: { type: "string" },
    final: { type: "boolean" },
    cause: { type: "string" },
  },
} as const;

/** Registers `POST /v1/verify/outcomes` on `app`. */
export function registerOutcomes(app: FastifyInstance): void {
  app.post<{ Body: OutcomeBody }>(
    "/v1/verify/outcomes",
    {
      schema: {
        tags: ["verify"],
        summary:
          "Record a later outcome (authorized, settled, failed) or a hold step (captured, voided, refunded) of an allowed action (scope outcomes:write, a payment-side party of the agreement)",
        body: {
          type: "object",
          required: ["agreement_id", "action_id", "outcome"],
          properties: {
            agreement_id: id,
            agent_id: id,
            action_id: id,
            outcome: { type: "string", enum: ["authorized", "settled", "failed", "captured", "voided", "refunded"] },
            amount: { type: "number", minimum: 0, description: "captured, refunded: the step's amount in major units of the action's currency." },
            final: { type: "boolean", description: "captured: the last capture; the rest of the hold is released." },
            idempotency_key: textSchema({ minLength: 1, maxLength: 256 }),
          },
        },
        response: {
          200: {
            type: "object",
            required: ["agreement_id", "action_id", "outcome", "replayed", "entry"],
            properties: {
              agreement_id: { type: "string" },
              action_id: { type: "string" },
              outcome: { type: "string" },
              replayed: { type: "boolean" },
              entry: entrySchema,
              entries: {
                type: "array",
                items: entrySchema,
                description: "Hold steps: every entry the step appended (a capture or refund may be followed by its release).",
              },
              hold: holdSchema,
            },
          },
          ...errorResponses(400, 401, 403, 404, 409, 503),
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireScope("outcomes:write"),
    },
    async (request) => {
      const credential = keyCredential(request);
      const pool = app.requireDb();
      const { agreement_id: agreementId, action_id: actionId, outcome } = request.body;
      const step = STEPS.has(outcome) ? stepInput(request.body) : undefined;
      if (!step && (request.body.amount !== undefined || request.body.final !== undefined || request.body.idempotency_key !== undefined))
        throw new ApiError("VALIDATION_FAILED", `outcome ${outcome} takes no amount, final nor idempotency_key`);
      // Not a party, or unknown: the same 404, so existence is not revealed; a party of several agents' agreements under the id names agent_id.
      const stored = await theVisibleOne(
        await loadAgreementRecords(pool, [agreementId], request.body.agent_id),
        async (a) => (await paymentParties(pool, a.record)).has(credential.org_id),
        "AGREEMENT_NOT_FOUND",
      );
      if (step) return recordStep(app, request.log, { agreementId, agentId: stored.agentId, actionId, outcome, step, orgId: credential.org_id });
      const r = await recordOutcome(pool, { agreementId, agentId: stored.agentId, actionId, outcome: outcome as LaterOutcome, at: app.clock().toISOString() });
      if (!r.recorded) {
        if (r.code === "OUTCOME_NOT_ALLOWED") throw new ApiError("OUTCOME_NOT_ALLOWED", `outcome ${outcome} cannot follow ${r.current}`);
        if (r.code === "AGREEMENT_NOT_FOUND") throw new ApiError("AGREEMENT_NOT_FOUND");
        throw new ApiError("ACTION_NOT_RECORDED", `action ${actionId} is not recorded as allowed in the ledger of agreement ${agreementId}`);
      }
      if (!r.replayed && r.agentId !== null) app.verifyRuntime?.candidates.forget(r.agentId);
      request.log.info({ agreement_id: agreementId, action_id: actionId, outcome, replayed: r.replayed, org_id: credential.org_id }, "outcome recorded");
      return { agreement_id: agreementId, action_id: actionId, outcome, replayed: r.replayed, entry: r.entry };
    },
  );
}

/** The hold step a body asks for; VALIDATION_FAILED when a member it needs is missing. */
function stepInput(b: OutcomeBody): HoldStepInput {
  if (b.outcome === "voided") {
    if (b.amount !== undefined || b.final !== undefined || b.idempotency_key !== undefined)
      throw new ApiError("VALIDATION_FAILED", "outcome voided takes no amount, final nor idempotency_key");
    return { kind: "voided" };
  }
  if (b.amount === undefined || b.idempotency_key === undefined)
    throw new ApiError("VALIDATION_FAILED", `outcome ${b.outcome} needs amount and idempotency_key`);
  if (b.outcome === "refunded") {
    if (b.final !== undefined) throw new ApiError("VALIDATION_FAILED", "outcome refunded takes no final");
    return { kind: "refunded", key: b.idempotency_key, amount: b.amount };
  }
  return { kind: "captured", key: b.idempotency_key, amount: b.amount, final: b.final === true };
}

/** Records a hold step and answers it (see the module comment). */
async function recordStep(
  app: FastifyInstance,
  log: FastifyBaseLogger,
  s: { agreementId: string; agentId: string; actionId: string; outcome: string; step: HoldStepInput; orgId: string },
): Promise<Record<string, unknown>> {
  const r = await recordHoldStep(app.requireDb(), {
    agreementId: s.agreementId,
    agentId: s.agentId,
    actionId: s.actionId,
    step: s.step,
    at: app.clock().toISOString(),
  });
  if (!r.recorded) {
    switch (r.code) {
      case "AGREEMENT_NOT_FOUND":
        throw new ApiError("AGREEMENT_NOT_FOUND");
      case "ACTION_NOT_RECORDED":
        throw new ApiError("ACTION_NOT_RECORDED", `action ${s.actionId} is not recorded as allowed in the ledger of agreement ${s.agreementId}`);
      case "OUTCOME_NOT_ALLOWED":
        throw new ApiError("OUTCOME_NOT_ALLOWED", `outcome ${s.outcome} cannot follow ${r.current}`);
      case "STEP_CONFLICT":
        throw new ApiError("STEP_CONFLICT", `idempotency_key was already used for another ${s.outcome} step of action ${s.actionId}`);
      case "AMOUNT_INVALID":
        throw new ApiError("OUTCOME_AMOUNT_INVALID", `amount must be a positive amount in the minor units of ${r.currency} (0 only for a final capture)`);
      case "CAPTURE_EXCEEDS_HOLD":
        throw new ApiError("CAPTURE_EXCEEDS_HOLD", `capture exceeds the ${formatMinor(r.limitMinor, r.currency)} ${r.currency} left of the hold`);
      case "REFUND_EXCEEDS_CAPTURED":
        throw new ApiError(
          "REFUND_EXCEEDS_CAPTURED",
          `refund exceeds the ${formatMinor(r.limitMinor, r.currency)} ${r.currency} captured and not yet refunded`,
        );
    }
  }
  if (!r.replayed && r.agentId !== null && r.entries.some((e) => releasesBudget(e.outcome))) app.verifyRuntime?.candidates.forget(r.agentId);
  log.info(
    {
      agreement_id: s.agreementId,
      action_id: s.actionId,
      outcome: s.outcome,
      replayed: r.replayed,
      org_id: s.orgId,
      entries: r.entries.map((e) => ({ outcome: e.outcome, amount: e.amount, sequence: e.sequence })),
    },
    "outcome recorded",
  );
  const t = r.totals;
  const fmt = (m: bigint) => formatMinor(m, r.currency);
  return {
    agreement_id: s.agreementId,
    action_id: s.actionId,
    outcome: s.outcome,
    replayed: r.replayed,
    entry: r.entries[0],
    entries: r.entries,
    hold: {
      currency: r.currency,
      held: fmt(t.heldMinor),
      captured: fmt(t.capturedMinor),
      refunded: fmt(t.refundedMinor),
      counted: fmt(t.countedMinor),
      open: t.open,
    },
  };
}
