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
 */
import type { FastifyInstance } from "fastify";
import type { LaterOutcome } from "../../../core/agreement/index.js";
import { textSchema } from "../../../core/schemas/index.js";
import { paymentParties, loadAgreementRecords, recordOutcome } from "../../../store/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { keyCredential } from "../../plugins/auth.js";
import { theVisibleOne } from "../shared/visible-one.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";

interface OutcomeBody {
  agreement_id: string;
  agent_id?: string;
  action_id: string;
  outcome: LaterOutcome;
}

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
  },
} as const;

/** Registers `POST /v1/verify/outcomes` on `app`. */
export function registerOutcomes(app: FastifyInstance): void {
  app.post<{ Body: OutcomeBody }>(
    "/v1/verify/outcomes",
    {
      schema: {
        tags: ["verify"],
        summary: "Record a later outcome (authorized, settled, failed) of an allowed action (scope outcomes:write, a payment-side party of the agreement)",
        body: {
          type: "object",
          required: ["agreement_id", "action_id", "outcome"],
          properties: { agreement_id: id, agent_id: id, action_id: id, outcome: { type: "string", enum: ["authorized", "settled", "failed"] } },
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
      // Not a party, or unknown: the same 404, so existence is not revealed; a party of several agents' agreements under the id names agent_id.
      const stored = await theVisibleOne(
        await loadAgreementRecords(pool, [agreementId], request.body.agent_id),
        async (a) => (await paymentParties(pool, a.record)).has(credential.org_id),
        "AGREEMENT_NOT_FOUND",
      );
      const r = await recordOutcome(pool, { agreementId, agentId: stored.agentId, actionId, outcome, at: app.clock().toISOString() });
      if (!r.recorded) {
        if (r.code === "OUTCOME_NOT_ALLOWED") throw new ApiError("OUTCOME_NOT_ALLOWED", `outcome ${outcome} cannot follow ${r.current}`);
        if (r.code === "AGREEMENT_NOT_FOUND") throw new ApiError("AGREEMENT_NOT_FOUND");
        throw new ApiError("ACTION_NOT_RECORDED", `action ${actionId} is not recorded as allowed in the ledger of agreement ${agreementId}`);
      }
      if (!r.replayed && r.agentId !== null) app.verifyRuntime?.snapshots.forget(r.agentId);
      request.log.info({ agreement_id: agreementId, action_id: actionId, outcome, replayed: r.replayed, org_id: credential.org_id }, "outcome recorded");
      return { agreement_id: agreementId, action_id: actionId, outcome, replayed: r.replayed, entry: r.entry };
    },
  );
}
