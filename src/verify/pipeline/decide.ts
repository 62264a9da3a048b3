/**
 * Decide: the verify decision, pure (no I/O, no clock, no cache). Each step takes what Gather
 * read (../gather/index.ts) and gives either nothing (the next step decides) or a `Decided`:
 * the answer and ONE effect for the decision log (../commit/decision-log.ts) to commit:
 * `none` (answered, nothing stored: a stale revocation index), `refusal` (store the refusal),
 * `spend` (record the ALLOW's spend), `revoke` (the service's REVOKE decision); or an error
 * (an HTTP error instead of a decision), which a stored answer of the same request may win.
 *
 * Order (docs/verify.md): the revocation index (stale: STEP_UP REVOCATION_STATE_STALE, not
 * stored); the agent (unknown: AGENT_NOT_FOUND; another operator's: AGENT_NOT_OWNED);
 * `proposed_at` within the skew of the service clock (outside: the stored answer of the same
 * request, else PROPOSED_AT_SKEW, nothing stored); the agent's status (AGENT_NOT_ACTIVE); the
 * candidate agreements (none: NO_ACTIVE_AGREEMENT, or DELEGATION_REVOKED / AGREEMENT_REVOKED
 * when a revocation is why; several: AGREEMENT_NOT_SELECTED; an intent none holds:
 * INTENT_NOT_FOUND); then `evaluate` on the selected candidate's evidence (a recorded payment
 * mandate's candidate against its delegation alone, its agreement row holding only the
 * ledger: docs/mandates.md): REVOKE revokes, ALLOW spends, anything else is a refusal. Only a
 * DENY that tried what the grant forbids counts toward DENIED_ATTEMPT_BURST (`burstExempt`
 * false).
 */
import type { HashString } from "../../core/canonical/index.js";
import {
  DEFAULT_POLICY,
  REASONS,
  countsAsAttempt,
  decisionFor,
  evaluate,
  type Action,
  type Decision,
  type EvalContext,
  type EvalPolicy,
  type ReasonCode,
} from "../../core/evaluate/index.js";
import { MANDATE_INTENT_ID } from "../../core/mandates/index.js";
import { parseInstant } from "../../core/time/index.js";
import type { AgentForVerify, AllowedSpend, RevokedCause } from "../../store/index.js";
import type { VerifyCandidate } from "../caches/candidates.js";
import type { Evidence } from "../gather/index.js";
import { readRequest, type VerifyRequest, type VerifyResponse } from "./request.js";
import { selectCandidate, type Selection } from "./select.js";
import { allowedSpendFor } from "./spend-request.js";

/** Why a verify is answered with an HTTP error instead of a decision. */
export type VerifyErrorCode = "AGENT_NOT_FOUND" | "AGENT_NOT_OWNED" | "ACTION_REUSED" | "ACTION_RELEASED" | "PROPOSED_AT_SKEW";

/** A verify that gets no decision (the route maps the code to 404, 403, 409, 409, 400). */
export class VerifyError extends Error {
  override readonly name = "VerifyError";
  constructor(
    readonly code: VerifyErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** One verify request as the decision sees it. */
export interface Question {
  orgId: string;
  req: VerifyRequest;
  agentId: string;
  actionId: string;
  /** The action the engine evaluates. */
  action: Action;
  /** The request hash (idempotency: the same action_id with another hash is refused). */
  hash: HashString;
  /** The service clock at the start of the verify. */
  now: Date;
  nowMs: number;
}

/** The one effect of a decision (see the module comment). */
export type Effect =
  | { kind: "none" }
  | { kind: "refusal"; burstExempt: boolean }
  | { kind: "spend"; candidate: VerifyCandidate; spend: AllowedSpend }
  | { kind: "revoke"; candidate: VerifyCandidate; reason: string };

/** What a decision step gives: the answer and its effect, or an error (which a stored answer of the same request wins when `replay`). */
export type Decided = { answer: VerifyResponse; effect: Effect } | { error: VerifyError; replay: boolean };

type Base = Pick<VerifyResponse, "agent_id" | "action_id" | "agreement_id">;

/** The question of verify `req` of organization `orgId` at `now`. */
export function question(orgId: string, req: VerifyRequest, now: Date): Question {
  const { action, hash } = readRequest(req);
  return { orgId, req, agentId: req.agent_id, actionId: action.action_id, action, hash, now, nowMs: now.getTime() };
}

function baseOf(q: Question, agreementId: string | null = null): Base {
  return { agent_id: q.agentId, action_id: q.actionId, agreement_id: agreementId };
}

/** The answer for a single reason found outside the engine. */
export function refusalAnswer(code: ReasonCode, message: string, base: Base): VerifyResponse {
  const info = REASONS[code];
  return {
    verdict: info.verdict,
    svc_decision: decisionFor(info.verdict, "revoke" in info),
    reasons: [code],
    messages: [{ code, message }],
    required_action: info.requiredAction,
    ...base,
  };
}

/** A refusal to store; one of a stale index is answered without being stored. */
export function refusalOf(answer: VerifyResponse): Decided {
  if (answer.reasons.includes("REVOCATION_STATE_STALE")) return { answer, effect: { kind: "none" } };
  return { answer, effect: { kind: "refusal", burstExempt: answer.verdict !== "DENY" || !countsAsAttempt(answer.reasons) } };
}

/** The answer while revocation state is stale (`why`). */
export function staleAnswer(q: Question, why: string): Decided {
  return refusalOf(refusalAnswer("REVOCATION_STATE_STALE", `${why}; retry later`, baseOf(q)));
}

/** The agent's checks: unknown, another operator's, `proposed_at` out of skew, not active; undefined when it may go on. */
export function admit(q: Question, agent: AgentForVerify | undefined, skewMs: number): Decided | undefined {
  if (!agent) return { error: new VerifyError("AGENT_NOT_FOUND", "agent was not found"), replay: false };
  if (agent.org_id !== q.orgId) return { error: new VerifyError("AGENT_NOT_OWNED", "agent belongs to another organization"), replay: false };
  const proposedAt = q.action.proposed_at;
  const proposed = parseInstant(proposedAt);
  if (proposed === undefined || Math.abs(proposed - q.nowMs) > skewMs) {
    // A retry of a request answered earlier (while its proposed_at was fresh) gets that answer.
    const error = new VerifyError(
      "PROPOSED_AT_SKEW",
      `action.proposed_at ${proposedAt} is more than ${skewMs / 1000} seconds from the service clock (${q.now.toISOString()}); ` +
        "send the time the action is proposed: rates and windows are those of the decision's own time",
    );
    return { error, replay: true };
  }
  if (agent.status !== "active")
    return refusalOf(refusalAnswer("AGENT_NOT_ACTIVE", `agent ${agent.agent_id} is ${agent.status}, not active, in the registry`, baseOf(q)));
  return undefined;
}

/** The candidate the request selects among the agent's (./select.ts). */
export function select(q: Question, candidates: readonly VerifyCandidate[]): Selection {
  const { agreement_id: agreementId } = q.req;
  const intentId = q.action.intent_id;
  return selectCandidate(candidates, q.orgId, { ...(agreementId !== undefined ? { agreementId } : {}), ...(intentId !== undefined ? { intentId } : {}) });
}

/** The refusal when no single candidate is selected; `cause`: the revocation that explains none. */
export function unselected(q: Question, sel: Exclude<Selection, { kind: "one" }>, cause?: RevokedCause): Decided {
  const requested = q.req.agreement_id;
  switch (sel.kind) {
    case "none": {
      if (cause) {
        const message =
          cause.reason === "DELEGATION_REVOKED"
            ? `delegation ${cause.delegationId ?? ""} of agreement ${cause.agreementId} is revoked`
            : `agreement ${cause.agreementId} is revoked`;
        return refusalOf(refusalAnswer(cause.reason, message, baseOf(q, cause.agreementId)));
      }
      const message =
        requested !== undefined
          ? `agreement ${requested} is not an active stored agreement of agent ${q.agentId}`
          : `agent ${q.agentId} has no active stored agreement`;
      return refusalOf(refusalAnswer("NO_ACTIVE_AGREEMENT", message, baseOf(q, requested ?? null)));
    }
    case "ambiguous":
      return refusalOf(
        refusalAnswer(
          "AGREEMENT_NOT_SELECTED",
          `agent ${q.agentId} has ${sel.agreementIds.length} active agreements that could apply (${sel.agreementIds.join(", ")}); send agreement_id or an intent_id that picks one`,
          baseOf(q),
        ),
      );
    case "intent-not-found":
      return refusalOf(
        refusalAnswer(
          "INTENT_NOT_FOUND",
          `intent ${sel.intentId} is not a live intent of any active agreement of agent ${q.agentId} (${sel.agreementIds.join(", ")})`,
          baseOf(q),
        ),
      );
  }
}

function answerOf(d: Decision, base: Base): VerifyResponse {
  const out: VerifyResponse = {
    verdict: d.verdict,
    svc_decision: d.svc_decision,
    reasons: d.reasons,
    messages: d.messages,
    required_action: d.required_action,
    ...base,
  };
  if (d.intent_id !== undefined) out.intent_id = d.intent_id;
  return out;
}

/** Evaluates the selected candidate `c` on `ev` and gives the answer with its effect. */
export function judge(
  q: Question,
  c: VerifyCandidate,
  ev: Evidence,
  recentDenials: number,
  policy: EvalPolicy = DEFAULT_POLICY,
  approvedReasons?: ReadonlySet<ReasonCode>,
): Decided {
  const { req, action } = q;
  const ctx: EvalContext = {
    now: q.nowMs,
    policy,
    revocations: ev.revocations,
    revocationStateStale: ev.revocationStateStale,
    recentDenials,
    ...(ev.rate ? { rate: ev.rate } : {}),
    ...(req.risk_score !== undefined ? { riskScore: req.risk_score } : {}),
    ...(req.principal_present !== undefined ? { principalPresent: req.principal_present } : {}),
    ...(req.ledger_sequence !== undefined ? { ledgerSequence: req.ledger_sequence } : {}),
    ...(c.delegationSpentMinor !== undefined ? { delegationSpentMinor: c.delegationSpentMinor } : {}),
    ...(approvedReasons ? { approvedReasons } : {}),
  };
  // A recorded payment mandate: its delegation is the evidence, its agreement row only the ledger.
  const evidence = c.row.evidence !== undefined;
  const decided = evaluate(ev.delegation, evidence ? undefined : ev.agreement, action, ctx);
  const d = evidence && decided.amount_minor !== undefined ? { ...decided, intent_id: MANDATE_INTENT_ID } : decided;
  const answer = answerOf(d, baseOf(q, c.agreementId));
  if (d.svc_decision === "REVOKE") {
    const reason = d.messages
      .filter((m) => "revoke" in REASONS[m.code])
      .map((m) => `${m.code}: ${m.message}`)
      .join("; ");
    return { answer, effect: { kind: "revoke", candidate: c, reason } };
  }
  if (d.verdict === "ALLOW") {
    const decision = { agentId: q.agentId, requestHash: q.hash, body: { ...answer } };
    const spend = allowedSpendFor(c, action, d, { at: q.now.toISOString(), ...(ev.rate ? { rate: ev.rate } : {}), decision, chain: ev.delegation.chain });
    return { answer, effect: { kind: "spend", candidate: c, spend } };
  }
  return refusalOf(answer);
}
