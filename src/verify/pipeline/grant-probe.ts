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
import { evaluate, type Action, type EvalContext, type EvalPolicy, type ReasonCode, type Verdict } from "../../core/evaluate/index.js";
import type { Gather } from "../gather/index.js";

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

/** What a probe reads with: verify's own gather side (nothing that writes) and its policy. */
export interface ProbeDeps {
  gather: Gather;
  policy: EvalPolicy;
  now: Date;
}

const SEVERITY: Record<Verdict, number> = { ALLOW: 0, STEP_UP: 1, DENY: 2 };

/** Probes whether agent `agentId` (of operator `orgId`) could pay `payment` now (see the module comment). */
export async function probeGrant(deps: ProbeDeps, agentId: string, orgId: string, payment: ProbePayment): Promise<GrantProbe> {
  const { gather } = deps;
  if (gather.staleness() !== undefined) return { live: false, agreement_id: null, verdict: "STEP_UP", reasons: ["REVOCATION_STATE_STALE"] };
  const nowMs = deps.now.getTime();
  const snap = await gather.agent(agentId, nowMs);
  const agent = snap.agent;
  if (!agent || agent.status !== "active") return { live: false, agreement_id: null, verdict: "DENY", reasons: ["AGENT_NOT_ACTIVE"] };
  // The operator's own agreements, as verify would see them (./select.ts rule 1).
  const candidates = (await gather.candidates(agentId, snap, nowMs)).candidates.filter((c) => c.orgId === null || c.orgId === orgId);
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
    const ev = await gather.evidence(c, agentId, action, deps.now);
    const ctx: EvalContext = {
      now: nowMs,
      policy: deps.policy,
      revocations: ev.revocations,
      revocationStateStale: false,
      recentDenials: 0,
      ...(ev.rate ? { rate: ev.rate } : {}),
      ...(c.delegationSpentMinor !== undefined ? { delegationSpentMinor: c.delegationSpentMinor } : {}),
    };
    const d = evaluate(ev.delegation, c.row.evidence !== undefined ? undefined : ev.agreement, action, ctx);
    const probe: GrantProbe = { live: d.verdict === "ALLOW", agreement_id: c.agreementId, verdict: d.verdict, reasons: d.reasons };
    if (probe.live) return probe;
    if (!best || SEVERITY[probe.verdict] < SEVERITY[best.verdict]) best = probe;
  }
  return best as GrantProbe;
}
