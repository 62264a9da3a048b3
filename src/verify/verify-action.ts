/**
 * `POST /v1/verify` without HTTP: one payment action of an agent checked against its active
 * stored agreement, an ALLOW recorded in the ledger, and the answer (docs/verify.md).
 *
 * Three parts: Gather reads (./gather/index.ts: the agent's snapshot, its candidates, the
 * revocation that explains none, the selected candidate's evidence: acknowledgement keys,
 * stored chain, rates); Decide is pure (./pipeline/decide.ts: the answer and one effect);
 * Commit stores it through the decision log (./commit/decision-log.ts: idempotency, replay,
 * the race-loss release). Each read happens only when the steps before left the answer open.
 *
 * Statements per verify (warm caches, besides authentication): none before the decision (the
 * agent, its candidates and its recent denials are in the candidate cache); then a refusal
 * shares one insert with concurrent refusals, committed asynchronously, and an ALLOW shares
 * one spend transaction (two round trips, committed durably) with concurrent ALLOWs.
 */
import type { EvalPolicy, ReasonCode } from "../core/evaluate/index.js";
import type { VerifyApprovals } from "./approvals.js";
import type { DecisionLog } from "./commit/decision-log.js";
import { admit, judge, question, select, staleAnswer, unselected } from "./pipeline/decide.js";
import type { VerifyRequest, VerifyResponse } from "./pipeline/request.js";
import type { Gather } from "./gather/index.js";

/** What a verify runs with: built once, at start-up (src/api/plugins/verify-runtime.ts). */
export interface VerifyDeps {
  gather: Gather;
  log: Pick<DecisionLog, "commit">;
  /** The service clock. */
  clock: () => Date;
  /** How far `action.proposed_at` may be from the clock, either way, ms (WRIT_PROPOSED_AT_SKEW_SECONDS). */
  proposedAtSkewMs: number;
  policy: EvalPolicy;
  /** Approvals of STEP_UPs the principal can clear (./approvals.ts); unset: a STEP_UP is final. */
  approvals?: Pick<VerifyApprovals, "isRetry" | "settle">;
}

/** Answers one verify of organization `orgId`. Throws VerifyError (an HTTP error instead of a decision). */
export async function verifyAction(deps: VerifyDeps, orgId: string, req: VerifyRequest): Promise<VerifyResponse> {
  const { gather, log } = deps;
  const q = question(orgId, req, deps.clock());
  const stale = gather.staleness();
  if (stale !== undefined) return log.commit(q, staleAnswer(q, stale));

  const snapshot = await gather.agent(q.agentId, q.nowMs);
  let refused = admit(q, snapshot.agent, deps.proposedAtSkewMs);
  // The retry of an approval's own request keeps the proposed_at checked when the approval opened (./approvals.ts).
  if (refused && "error" in refused && refused.error.code === "PROPOSED_AT_SKEW" && deps.approvals && (await deps.approvals.isRetry(q)))
    refused = admit(q, snapshot.agent, Infinity);
  if (refused) return log.commit(q, refused);

  const { candidates, recentDenials } = await gather.candidates(q.agentId, snapshot, q.nowMs, req.ledger_sequence);
  const sel = select(q, candidates);
  if (sel.kind !== "one") {
    const cause = sel.kind === "none" ? await gather.revokedCause(q.agentId, orgId, req.agreement_id) : undefined;
    return log.commit(q, unselected(q, sel, cause));
  }

  const c = sel.candidate;
  const evidence = await gather.evidence(c, q.agentId, q.action, q.now);
  const decided = judge(q, c, evidence, recentDenials, deps.policy);
  // A STEP_UP the principal can clear opens, answers or completes its approval (./approvals.ts).
  if (deps.approvals && "answer" in decided && decided.answer.verdict === "STEP_UP") {
    const rejudge = (cleared: ReadonlySet<ReasonCode>) => judge(q, c, evidence, recentDenials, deps.policy, cleared);
    return deps.approvals.settle(q, decided, c, evidence.delegation, rejudge, (d) => log.commit(q, d));
  }
  return log.commit(q, decided);
}
