/**
 * `POST /v1/verify` without HTTP: checks one payment action of an agent against its active
 * stored agreement, records an ALLOW in the ledger, and answers (docs/verify.md).
 *
 * Order: the revocation index (stale: STEP_UP REVOCATION_STATE_STALE, not stored); the agent
 * (unknown: AGENT_NOT_FOUND; another operator's: AGENT_NOT_OWNED); `proposed_at` within the
 * skew of the service clock (outside: the stored answer of the same request, else
 * PROPOSED_AT_SKEW, nothing stored); the agent's status
 * (AGENT_NOT_ACTIVE); the candidate agreements (none: NO_ACTIVE_AGREEMENT, or
 * DELEGATION_REVOKED / AGREEMENT_REVOKED when a revocation is why; several:
 * AGREEMENT_NOT_SELECTED); acknowledgement domains; a sub-delegation's stored chain
 * (./stored-chain.ts: one statement, only for a delegation with a chain); rates (only when a currency differs);
 * `evaluate` (a recorded payment mandate's candidate against its delegation alone, its
 * agreement row holding only the ledger: docs/mandates.md); then, on REVOKE, the revocation (./revoke.ts); on ALLOW, the spend transaction.
 * A decision stored earlier for (agent, action_id) wins wherever the new one would be stored:
 * the same request gets it again, another request ACTION_REUSED.
 *
 * Statements per verify (warm caches, besides authentication): the agent, its candidates and
 * its recent denials come from its snapshot (../caches/snapshots.ts: no statement); then a refusal
 * stores its decision in a batch shared with concurrent refusals (./refusal-writer.ts),
 * committed asynchronously, and an ALLOW records its spend in a batch shared with concurrent
 * ALLOWs (./spend-writer.ts: one spend transaction, two round trips, committed durably).
 *
 * Promises:
 * - Never an ALLOW unless its ledger entry committed: a spend refusal becomes a DENY with its
 *   reason, and an ALLOW carries `ledger_entry` {sequence, entry_hash}.
 * - One answer per (agent, action_id): every decision except a stale-index STEP_UP is stored
 *   (an ALLOW in the spend's own transaction); a retry with the same request hash gets the
 *   stored answer and spends nothing; a different request with that action_id is refused. An
 *   ALLOW's request hash is also kept with its ledger entry, so after its stored answer was
 *   pruned (retention) a different request that would be ALLOWed is still refused
 *   (ACTION_REUSED, from the spend transaction) and the same one answered with its entry. If
 *   a concurrent request with that action_id stored its answer first, a spend just recorded
 *   for this one is released (outcome `failed`) and the stored answer is returned.
 */
import type { Pool } from "pg";
import type { HashString } from "../../core/canonical/index.js";
import { prepareDelegation } from "../../core/delegation/index.js";
import {
  DEFAULT_POLICY, REASONS, countsAsAttempt, decisionFor, evaluate,
  type Action, type Decision, type EvalContext, type EvalPolicy, type ReasonCode,
} from "../../core/evaluate/index.js";
import type { Signer } from "../../core/jose/index.js";
import { MANDATE_INTENT_ID } from "../../core/mandates/index.js";
import { allowedActionOf, recordOutcome } from "../../store/ledger/index.js";
import type { LogAppendOptions } from "../../store/log.js";
import { RecordStoreError } from "../../store/record-errors.js";
import { findVerifyDecision, saveVerifyDecision, type StoredVerifyDecision } from "../../store/verify-decisions.js";
import { BURST_EXEMPT, revokedCause } from "../../store/verify-reads.js";
import type { AckDomainDirectory } from "./ack-domains.js";
import type { RecordCache } from "../caches/record-cache.js";
import { prepareCandidates, type VerifyCandidate } from "../caches/candidates.js";
import { implicitDelegation } from "./implicit-delegation.js";
import type { VerifyMetrics } from "../metrics.js";
import { ratesFor, type RateLookup } from "./rates.js";
import type { RefusalWriter } from "./refusal-writer.js";
import { readRequest, type VerifyRequest, type VerifyResponse } from "./request.js";
import type { RevocationIndex } from "../revocation/index.js";
import { revokeByPolicy } from "./revoke.js";
import { selectCandidate } from "./select.js";
import { allowedSpendFor } from "./spend-request.js";
import { withStoredAncestors } from "./stored-chain.js";
import type { SpendWriter } from "./spend-writer.js";
import { recentDenialCount, type AgentSnapshots } from "../caches/snapshots.js";
import { parseInstant } from "../../core/time/index.js";
import { approvalStep, approvalUsed, principalKeysOf, replacesApprovalStepUp, type ApprovalOptions } from "../approvals.js";
import { findApprovalOfAction } from "../../store/approvals.js";

/** Why a verify is answered with an HTTP error instead of a decision. */
export type VerifyErrorCode = "AGENT_NOT_FOUND" | "AGENT_NOT_OWNED" | "ACTION_REUSED" | "ACTION_RELEASED" | "PROPOSED_AT_SKEW";

/** A verify that gets no decision (the route maps the code to 404, 403, 409, 409, 400). */
export class VerifyError extends Error {
  override readonly name = "VerifyError";
  constructor(readonly code: VerifyErrorCode, message: string) {
    super(message);
  }
}

/** What a verify runs with. */
export interface VerifyDeps {
  pool: Pool;
  index: Pick<RevocationIndex, "stale" | "isDelegationRevoked" | "isAgreementRevoked" | "markDelegationRevoked" | "markAgreementRevoked"> & {
    /** Why the index is stale (the LISTEN path or the Kubernetes watch), when it can say. */
    staleReason?(): string | undefined;
  };
  cache: RecordCache;
  /** What is known of agents (no statement when warm). */
  snapshots: Pick<AgentSnapshots, "read" | "noteDenial" | "noteSpend" | "forget" | "denialWindowSeconds">;
  /** Where refusals are stored (in batches). */
  refusals: Pick<RefusalWriter, "save">;
  /** Where ALLOWs' spends are recorded (in batches sharing a transaction). */
  spends: Pick<SpendWriter, "record">;
  ackDomains: AckDomainDirectory;
  metrics: VerifyMetrics;
  /** Units of `to` per one `from` on a day (asked only for the UTC day of `now`). */
  rate: RateLookup;
  now: Date;
  /** How far `action.proposed_at` may be from `now`, either way (WRIT_PROPOSED_AT_SKEW_SECONDS). */
  proposedAtSkewMs: number;
  /** Signs the log entry of a REVOKE; null: revoked and alerted, not logged. */
  logSigner: Signer | null;
  logOptions: LogAppendOptions;
  policy?: EvalPolicy;
  /** [approvals] Opens approvals for STEP_UPs the principal can clear (../approvals.ts); unset: a STEP_UP is final. */
  approvals?: ApprovalOptions;
}

type Base = Pick<VerifyResponse, "agent_id" | "action_id" | "agreement_id">;

/** The answer for a single reason found outside the engine. */
function refusal(code: ReasonCode, message: string, base: Base): VerifyResponse {
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

function baseOf(b: VerifyResponse): Base {
  return { agent_id: b.agent_id, action_id: b.action_id, agreement_id: b.agreement_id };
}

function answer(d: Decision, base: Base): VerifyResponse {
  const out: VerifyResponse = { verdict: d.verdict, svc_decision: d.svc_decision, reasons: d.reasons, messages: d.messages, required_action: d.required_action, ...base };
  if (d.intent_id !== undefined) out.intent_id = d.intent_id;
  return out;
}

class Run {
  constructor(
    private readonly deps: VerifyDeps,
    private readonly agentId: string,
    private readonly actionId: string,
    private readonly hash: HashString,
  ) {}

  /** The stored answer to a retry (with its ledger entry), or ACTION_REUSED. */
  async replay(stored: StoredVerifyDecision): Promise<VerifyResponse> {
    if (stored.requestHash !== this.hash) throw this.reused();
    const { [BURST_EXEMPT]: _exempt, ...body } = stored.decision as unknown as VerifyResponse & { [BURST_EXEMPT]?: true };
    if (body.verdict === "ALLOW" && typeof body.agreement_id === "string") {
      // An ALLOW is answered again only while its entry still counts against the budget.
      const a = await allowedActionOf(this.deps.pool, body.agreement_id, this.actionId);
      if (!a || a.released) throw this.released(body.agreement_id);
      return { ...body, ledger_entry: { sequence: a.sequence, entry_hash: a.entry_hash } };
    }
    return body;
  }

  /** The refusal of a request whose action_id answered another request (or is in an imported ledger). */
  reused(): VerifyError {
    return new VerifyError("ACTION_REUSED", `action_id ${this.actionId} was already used by a different request of agent ${this.agentId}`);
  }

  /** The refusal of a retry whose ALLOW was released since (outcome `failed`). */
  released(agreementId: string): VerifyError {
    return new VerifyError(
      "ACTION_RELEASED",
      `action_id ${this.actionId} was allowed and then recorded as failed in the ledger of agreement ${agreementId}, which released its amount; ` +
        "it is never allowed again: send the payment as a new action with a new action_id",
    );
  }

  /**
   * Stores a decision that is not an ALLOW (unless another answer won) and answers it.
   * `burstExempt` marks a refusal of the spend transaction, which DENIED_ATTEMPT_BURST does
   * not count (see src/store/verify-reads.ts).
   */
  async settle(body: VerifyResponse, burstExempt = false, again = false): Promise<VerifyResponse> {
    if (body.reasons.includes("REVOCATION_STATE_STALE")) return this.counted(body);
    // Only a DENY that tried what the grant forbids counts toward DENIED_ATTEMPT_BURST.
    const exempt = burstExempt || body.verdict !== "DENY" || !countsAsAttempt(body.reasons);
    const decision = { ...body, ...(exempt ? { [BURST_EXEMPT]: true } : {}) };
    // Not an ALLOW: stored without waiting for the WAL flush (docs/verify.md, "Durability").
    const saved = await this.deps.refusals.save({ agentId: this.agentId, actionId: this.actionId, agreementId: body.agreement_id, requestHash: this.hash, decision });
    if (!saved.stored) {
      // [approvals] the final answer of an approval's request replaces its stored STEP_UP (../approvals.ts), once.
      if (!again && this.deps.approvals && (await replacesApprovalStepUp(this.deps.pool, saved.decision, this.hash))) return this.settle(body, burstExempt, true);
      return this.replay(saved.decision);
    }
    if (!exempt) this.deps.snapshots.noteDenial(this.agentId, this.deps.now.getTime());
    return this.counted(body);
  }

  counted(body: VerifyResponse): VerifyResponse {
    this.deps.metrics.countDecision(body.verdict, body.reasons);
    return body;
  }

  /** Carries out a REVOKE decision, then answers it. */
  async revoke(c: VerifyCandidate, d: Decision, body: VerifyResponse): Promise<VerifyResponse> {
    // A retry of an action already answered must not revoke anything.
    const earlier = await findVerifyDecision(this.deps.pool, this.agentId, this.actionId);
    if (earlier) return this.replay(earlier);
    const reason = d.messages.filter((m) => "revoke" in REASONS[m.code]).map((m) => `${m.code}: ${m.message}`).join("; ");
    const out = await revokeByPolicy(this.deps.pool, {
      agentId: this.agentId, candidate: c, reason, at: this.deps.now, signer: this.deps.logSigner, logOptions: this.deps.logOptions,
      decision: { actionId: this.actionId, requestHash: this.hash, body: { ...body } },
    });
    for (const id of out.revocation?.ids ?? []) {
      if (c.delegation) this.deps.index.markDelegationRevoked(id);
      else this.deps.index.markAgreementRevoked(id);
    }
    // Its candidates changed: the next verify reads them, rather than wait for Postgres's change notice.
    if ((out.revocation?.ids.length ?? 0) > 0) this.deps.snapshots.forget(this.agentId);
    return out.saved.stored ? this.counted(body) : this.replay(out.saved.decision);
  }

  /** Records an ALLOW's spend: the ALLOW with its ledger entry, or the DENY the spend refused with. */
  async spend(c: VerifyCandidate, action: Action, d: Decision, body: VerifyResponse, rate: EvalContext["rate"]): Promise<VerifyResponse> {
    const { pool } = this.deps;
    const at = this.deps.now.toISOString();
    const decision = { agentId: this.agentId, requestHash: this.hash, body: { ...body } };
    const spend = allowedSpendFor(c, action, d, { at, ...(rate ? { rate } : {}), decision });
    let r;
    try {
      r = await this.deps.spends.record(spend);
    } catch (e) {
      if (e instanceof RecordStoreError && e.code === "SPEND_INVALID") return this.settle(refusal("AMOUNT_INVALID", e.message, baseOf(body)), true);
      throw e;
    }
    if (!r.recorded && r.reason === "ACTION_RELEASED") throw this.released(c.agreementId);
    // The ledger holds the action for another request (also after its answer was pruned), or imported it: never this one's.
    if (!r.recorded && r.reason === "ACTION_REUSED") throw this.reused();
    if (!r.recorded && r.reason === "ACTION_DECIDED") {
      // Answered before (a retry of a refusal, or a concurrent request that won): that answer again.
      const earlier = await findVerifyDecision(pool, this.agentId, this.actionId);
      if (!earlier) throw new Error("verify decision was reported stored but not found");
      return this.replay(earlier);
    }
    if (!r.recorded) return this.settle({ ...refusal(r.reason, r.message, baseOf(body)), ...(body.intent_id ? { intent_id: body.intent_id } : {}) }, true);
    if (!r.replayed && r.intentSpentMinor !== undefined) {
      const del = spend.limits?.delegation;
      this.deps.snapshots.noteSpend(this.agentId, {
        agreementId: c.agreementId, intentId: spend.intentId, sequence: r.entry.sequence, entryHash: r.entry.entry_hash, intentSpentMinor: r.intentSpentMinor,
        ...(del && r.delegationSpentMinor !== undefined ? { delegation: { delegationId: del.delegationId, spentMinor: r.delegationSpentMinor } } : {}),
      });
    }
    const ledgerEntry = { sequence: r.entry.sequence, entry_hash: r.entry.entry_hash };
    // This answer committed with its entry: no other answer exists, nothing to read back.
    if (!r.replayed && r.decisionStored) return this.counted({ ...body, ledger_entry: ledgerEntry });
    const stored = await findVerifyDecision(pool, this.agentId, this.actionId);
    if (r.replayed) {
      // Recorded before: the stored answer, or (a ledger imported with the record) this one.
      if (stored) return this.replay(stored);
      const saved = await saveVerifyDecision(pool, { agentId: this.agentId, actionId: this.actionId, agreementId: c.agreementId, requestHash: this.hash, decision: { ...body } });
      return saved.stored ? this.counted({ ...body, ledger_entry: ledgerEntry }) : this.replay(saved.decision);
    }
    if (!stored || (stored.requestHash === this.hash && stored.decision.verdict === "ALLOW" && stored.agreementId === c.agreementId)) {
      if (!stored) await saveVerifyDecision(pool, { agentId: this.agentId, actionId: this.actionId, agreementId: c.agreementId, requestHash: this.hash, decision: { ...body } });
      return this.counted({ ...body, ledger_entry: ledgerEntry });
    }
    // A concurrent request with this action_id stored another answer first: release this spend.
    await recordOutcome(pool, { agreementId: c.agreementId, actionId: this.actionId, outcome: "failed", at });
    this.deps.snapshots.forget(this.agentId);
    return this.replay(stored);
  }
}

/** Answers one verify of organization `orgId` (see the module comment). Throws VerifyError. */
export async function verifyAction(deps: VerifyDeps, orgId: string, req: VerifyRequest): Promise<VerifyResponse> {
  const { action, hash } = readRequest(req);
  const base: Base = { agent_id: req.agent_id, action_id: action.action_id, agreement_id: null };
  const run = new Run(deps, req.agent_id, action.action_id, hash);
  if (deps.index.stale()) {
    return run.counted(refusal("REVOCATION_STATE_STALE", `${deps.index.staleReason?.() ?? "revocation updates have not been received within their bound"}; retry later`, base));
  }
  const nowMs = deps.now.getTime();
  let snap = await deps.snapshots.read(deps.pool, req.agent_id, nowMs);
  const agent = snap.agent;
  if (!agent) throw new VerifyError("AGENT_NOT_FOUND", "agent was not found");
  if (agent.org_id !== orgId) throw new VerifyError("AGENT_NOT_OWNED", "agent belongs to another organization");
  const proposed = parseInstant(action.proposed_at);
  if (proposed === undefined || Math.abs(proposed - nowMs) > deps.proposedAtSkewMs) {
    // A retry of a request answered earlier (while its proposed_at was fresh) gets that answer.
    // [approvals] the retry of an approval's own request keeps the proposed_at checked when it was opened.
    const approvalRetry = deps.approvals !== undefined && (await findApprovalOfAction(deps.pool, req.agent_id, action.action_id))?.requestHash === hash;
    const earlier = approvalRetry ? undefined : await findVerifyDecision(deps.pool, req.agent_id, action.action_id);
    if (earlier) return run.replay(earlier);
    if (!approvalRetry) throw new VerifyError(
      "PROPOSED_AT_SKEW",
      `action.proposed_at ${action.proposed_at} is more than ${deps.proposedAtSkewMs / 1000} seconds from the service clock (${deps.now.toISOString()}); ` +
        "send the time the action is proposed: rates and windows are those of the decision's own time",
    );
  }
  if (agent.status !== "active") return run.settle(refusal("AGENT_NOT_ACTIVE", `agent ${agent.agent_id} is ${agent.status}, not active, in the registry`, base));
  // The request has seen a longer ledger than the snapshot holds (another process's spends): read it now.
  const seen = req.ledger_sequence;
  if (seen !== undefined && snap.candidates.some((c) => c.ledgerSequence < seen)) snap = await deps.snapshots.read(deps.pool, req.agent_id, nowMs, { fresh: true });
  const rows = snap.candidates;
  const recentDenials = recentDenialCount(snap, nowMs, deps.snapshots.denialWindowSeconds);

  const candidates = await prepareCandidates(deps.pool, deps.cache, rows, { now: nowMs });
  const sel = selectCandidate(candidates, orgId, { ...(req.agreement_id !== undefined ? { agreementId: req.agreement_id } : {}), ...(action.intent_id !== undefined ? { intentId: action.intent_id } : {}) });
  if (sel.kind === "none") {
    const cause = await revokedCause(deps.pool, agent.agent_id, orgId, req.agreement_id);
    if (cause) {
      const message = cause.reason === "DELEGATION_REVOKED" ? `delegation ${cause.delegationId ?? ""} of agreement ${cause.agreementId} is revoked` : `agreement ${cause.agreementId} is revoked`;
      return run.settle(refusal(cause.reason, message, { ...base, agreement_id: cause.agreementId }));
    }
    const message = req.agreement_id !== undefined ? `agreement ${req.agreement_id} is not an active stored agreement of agent ${agent.agent_id}` : `agent ${agent.agent_id} has no active stored agreement`;
    return run.settle(refusal("NO_ACTIVE_AGREEMENT", message, { ...base, agreement_id: req.agreement_id ?? null }));
  }
  if (sel.kind === "ambiguous") {
    return run.settle(refusal("AGREEMENT_NOT_SELECTED", `agent ${agent.agent_id} has ${sel.agreementIds.length} active agreements that could apply (${sel.agreementIds.join(", ")}); send agreement_id or an intent_id that picks one`, base));
  }
  if (sel.kind === "intent-not-found") {
    return run.settle(refusal("INTENT_NOT_FOUND", `intent ${sel.intentId} is not a live intent of any active agreement of agent ${agent.agent_id} (${sel.agreementIds.join(", ")})`, base));
  }

  const c = sel.candidate;
  const agreement = await deps.ackDomains.apply(c.agreement, c.revision);
  // A sub-delegation is judged by the delegations its chain cites as stored (./stored-chain.ts).
  const delegation = c.delegation
    ? c.delegation.delegation.delegation_chain.length > 0 ? await withStoredAncestors(deps.pool, deps.cache, c.delegation) : c.delegation
    : prepareDelegation(implicitDelegation(c.agreement.agreement, agent.agent_id));
  const rate = await ratesFor(agreement, delegation, action, deps.rate, nowMs);
  const ctx: EvalContext = {
    now: nowMs,
    policy: deps.policy ?? DEFAULT_POLICY,
    revocations: deps.index,
    revocationStateStale: deps.index.stale(),
    recentDenials,
    ...(rate ? { rate } : {}),
    ...(req.risk_score !== undefined ? { riskScore: req.risk_score } : {}),
    ...(req.principal_present !== undefined ? { principalPresent: req.principal_present } : {}),
    ...(req.ledger_sequence !== undefined ? { ledgerSequence: req.ledger_sequence } : {}),
    ...(c.delegationSpentMinor !== undefined ? { delegationSpentMinor: c.delegationSpentMinor } : {}),
  };
  // A recorded payment mandate: its delegation is the evidence, its agreement row only the ledger.
  const evidence = c.row.evidence !== undefined;
  const evaluated = (x: EvalContext): Decision => {
    const decided = evaluate(delegation, evidence ? undefined : agreement, action, x);
    return evidence && decided.amount_minor !== undefined ? { ...decided, intent_id: MANDATE_INTENT_ID } : decided;
  };
  let d = evaluated(ctx);
  let body = answer(d, { ...base, agreement_id: c.agreementId });
  // [approvals] issue 32: a STEP_UP the principal can clear opens, answers or completes its approval (../approvals.ts).
  const ap = d.verdict === "STEP_UP" && deps.approvals ? await approvalStep({ pool: deps.pool, now: deps.now, options: deps.approvals, orgId, req, hash, agreementId: c.agreementId, decision: d, base: baseOf(body), principalKeys: principalKeysOf(delegation), reevaluate: (cleared) => evaluated({ ...ctx, approvedReasons: cleared }) }) : undefined;
  if (ap?.kind === "answer") return run.counted(ap.body);
  if (ap?.kind === "settle") return run.settle(ap.body);
  if (ap?.kind === "reused") throw run.reused();
  if (ap?.kind === "approved") [d, body] = [ap.decision, { ...answer(ap.decision, baseOf(body)), approval_id: ap.approvalId }];
  // [/approvals]
  if (d.svc_decision === "REVOKE") return run.revoke(c, d, body);
  if (d.verdict === "ALLOW") return ap?.kind === "approved" ? approvalUsed(deps.pool, ap.approvalId, await run.spend(c, action, d, body, rate), deps.now) : run.spend(c, action, d, body, rate);
  return run.settle(body);
}
