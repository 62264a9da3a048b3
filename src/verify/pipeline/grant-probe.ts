/**
 * Whether an agent holds a live grant that could pay a merchant now, WITHOUT spending: the
 * question `POST /v1/agents/verify-request` answers beside who signed a request. It runs the
 * same gather and decide steps as `verifyAction` (./decide.ts: the agent's snapshot, its
 * candidate agreements, acknowledgement domains, a sub-delegation's stored chain, rates, the
 * pure `evaluate`) over EVERY candidate agreement of the agent, and stops there: nothing is
 * stored (no decision, no ledger entry, no denial counted, no revocation), so a probe can be
 * asked any number of times.
 *
 * Promise: `live` is true only when `evaluate` answers ALLOW for the payment under some
 * candidate; then `agreement_id` is that candidate. Otherwise the answer is the candidate whose
 * refusal is least severe (STEP_UP before DENY), with its reasons. Revocation state that is
 * stale answers REVOCATION_STATE_STALE (never live).
 */
import type { Pool } from "pg";
import { prepareDelegation } from "../../core/delegation/index.js";
import { DEFAULT_POLICY, evaluate, type Action, type EvalContext, type EvalPolicy, type ReasonCode, type Verdict } from "../../core/evaluate/index.js";
import type { AckDomainDirectory } from "./ack-domains.js";
import type { RecordCache } from "../caches/record-cache.js";
import { prepareCandidates } from "../caches/candidates.js";
import type { AgentSnapshots } from "../caches/snapshots.js";
import { implicitDelegation } from "./implicit-delegation.js";
import { ratesFor, type RateLookup } from "./rates.js";
import type { RevocationIndex } from "../revocation/index.js";
import { withStoredAncestors } from "./stored-chain.js";

/** The payment a probe asks about (amount in major units). */
export interface ProbePayment {
  amount: number;
  currency: string;
  merchant: string;
  action_type?: string;
  category?: string;
  item?: string;
}

/** The answer of a probe. */
export interface GrantProbe {
  /** True when some grant of the agent would ALLOW the payment now. */
  live: boolean;
  /** The agreement that would pay (live), or whose refusal is shown; null when the agent has none. */
  agreement_id: string | null;
  verdict: Verdict;
  reasons: ReasonCode[];
}

/** What a probe reads with (a subset of verify's dependencies; nothing that writes). */
export interface ProbeDeps {
  pool: Pool;
  index: Pick<RevocationIndex, "stale" | "isDelegationRevoked" | "isAgreementRevoked">;
  cache: RecordCache;
  snapshots: Pick<AgentSnapshots, "read">;
  ackDomains: AckDomainDirectory;
  rate: RateLookup;
  now: Date;
  policy?: EvalPolicy;
}

const SEVERITY: Record<Verdict, number> = { ALLOW: 0, STEP_UP: 1, DENY: 2 };

/** Probes whether agent `agentId` (of operator `orgId`) could pay `payment` now (see the module comment). */
export async function probeGrant(deps: ProbeDeps, agentId: string, orgId: string, payment: ProbePayment): Promise<GrantProbe> {
  if (deps.index.stale()) return { live: false, agreement_id: null, verdict: "STEP_UP", reasons: ["REVOCATION_STATE_STALE"] };
  const nowMs = deps.now.getTime();
  const snap = await deps.snapshots.read(deps.pool, agentId, nowMs);
  const agent = snap.agent;
  if (!agent || agent.status !== "active") return { live: false, agreement_id: null, verdict: "DENY", reasons: ["AGENT_NOT_ACTIVE"] };
  // The operator's own agreements, as verify would see them (./select.ts rule 1).
  const candidates = (await prepareCandidates(deps.pool, deps.cache, snap.candidates, { now: nowMs })).filter((c) => c.orgId === null || c.orgId === orgId);
  if (candidates.length === 0) return { live: false, agreement_id: null, verdict: "DENY", reasons: ["NO_ACTIVE_AGREEMENT"] };
  const action: Action = {
    action_id: "probe",
    action_type: payment.action_type ?? "purchase",
    amount: payment.amount,
    currency: payment.currency,
    proposed_at: deps.now.toISOString(),
    agent_id: agentId,
    merchant: payment.merchant,
    ...(payment.category !== undefined ? { category: payment.category } : {}),
    ...(payment.item !== undefined ? { item: payment.item } : {}),
  };
  let best: GrantProbe | undefined;
  for (const c of candidates) {
    const agreement = await deps.ackDomains.apply(c.agreement, c.revision);
    const delegation = c.delegation
      ? c.delegation.delegation.delegation_chain.length > 0 ? await withStoredAncestors(deps.pool, deps.cache, c.delegation) : c.delegation
      : prepareDelegation(implicitDelegation(c.agreement.agreement, agentId));
    const rate = await ratesFor(agreement, delegation, action, deps.rate, nowMs);
    const ctx: EvalContext = {
      now: nowMs,
      policy: deps.policy ?? DEFAULT_POLICY,
      revocations: deps.index,
      revocationStateStale: false,
      recentDenials: 0,
      ...(rate ? { rate } : {}),
      ...(c.delegationSpentMinor !== undefined ? { delegationSpentMinor: c.delegationSpentMinor } : {}),
    };
    const d = evaluate(delegation, c.row.evidence !== undefined ? undefined : agreement, action, ctx);
    const probe: GrantProbe = { live: d.verdict === "ALLOW", agreement_id: c.agreementId, verdict: d.verdict, reasons: d.reasons };
    if (probe.live) return probe;
    if (!best || SEVERITY[probe.verdict] < SEVERITY[best.verdict]) best = probe;
  }
  return best as GrantProbe;
}
