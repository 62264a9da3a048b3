/**
 * The evaluation engine: a pure, synchronous function from prepared records, an action and a
 * context to a Decision. It runs a fixed chain of small policies, each of which adds findings
 * (reason codes from the one union in reasons.ts) or nothing.
 *
 * 1. Delegation-level policies run once.
 * 2. Intent-level policies run for each candidate intent: the one the action names
 *    (`intent_id`), else every live intent of the agreement. An action is authorized when some
 *    intent authorizes it: the candidate with the best verdict (ALLOW, then STEP_UP, then DENY;
 *    ties by fewer findings, then order) is the one reported.
 * 3. The verdict is the most severe of all findings; svc_decision maps DENY to BLOCK, and any
 *    finding marked `revoke` makes it REVOKE. required_action is that of the first finding
 *    with the deciding verdict.
 */
import { evaluateApproval } from "./delegation-approval.js";
import { evaluateChain } from "./delegation-chain.js";
import { evaluateConditions } from "./delegation-conditions.js";
import { REASONS, decisionFor, type Finding, type Verdict } from "./reasons.js";
import { actionMinor, Findings, amountIn, type EvalState } from "./state.js";
import { actingAgent, delegationStatus, delegationWindow, revocationFreshness, scopeResources } from "./policies/delegation.js";
import { revokeOnRisk } from "./policies/risk.js";
import { delegationAmount, usableAmount } from "./policies/amount.js";
import { agreementRevocation, eventChain, ledgerIntegrity, parentLimits } from "./policies/agreement.js";
import {
  intentAcks,
  intentAgent,
  intentAmount,
  intentBound,
  intentBreadth,
  intentSignature,
  intentVerb,
  intentWindow,
  type IntentPolicy,
} from "./policies/intent.js";
import { intentDistance } from "./policies/distance.js";
import type { Action, Decision, EvalContext, PreparedAgreement, PreparedDelegation, PreparedMandate } from "./types.js";

type Policy = (s: EvalState, out: Findings) => void;

const DELEGATION_POLICIES: readonly Policy[] = [
  revocationFreshness,
  delegationStatus,
  delegationWindow,
  (s, out) => out.addAll(evaluateChain(s.delegation, s.ctx)),
  (s, out) => out.addAll(evaluateApproval(s.delegation, s.ctx)),
  actingAgent,
  scopeResources,
  (s, out) => out.addAll(evaluateConditions(s.delegation.conditions, s.action, s.ctx)),
  revokeOnRisk,
  usableAmount,
  delegationAmount,
  agreementRevocation,
  eventChain,
  ledgerIntegrity,
  parentLimits,
];

const INTENT_POLICIES: readonly IntentPolicy[] = [
  intentBound,
  intentSignature,
  intentAgent,
  intentWindow,
  intentBreadth,
  intentVerb,
  intentAmount,
  intentAcks,
  intentDistance,
];

const SEVERITY: Record<Verdict, number> = { ALLOW: 0, STEP_UP: 1, DENY: 2 };

function verdictOf(findings: readonly Finding[]): Verdict {
  let v: Verdict = "ALLOW";
  for (const f of findings) {
    const fv = REASONS[f.code].verdict;
    if (SEVERITY[fv] > SEVERITY[v]) v = fv;
  }
  return v;
}

function candidates(agreement: PreparedAgreement, action: Action): PreparedMandate[] | undefined {
  if (action.intent_id === undefined) return agreement.mandates;
  const m = agreement.mandates.find((x) => x.mandate.intent_id === action.intent_id);
  return m ? [m] : undefined;
}

/** Evaluates one proposed action. Pure: same inputs, same Decision. */
export function evaluate(delegation: PreparedDelegation, agreement: PreparedAgreement | undefined, action: Action, ctx: EvalContext): Decision {
  const s: EvalState = { action, ctx, delegation, agreement, amountMinor: actionMinor(action) };
  const common = new Findings();
  for (const p of DELEGATION_POLICIES) p(s, common);

  let chosen: { m: PreparedMandate; findings: Finding[]; verdict: Verdict } | undefined;
  if (agreement) {
    const cands = candidates(agreement, action);
    if (!cands) {
      common.add("INTENT_NOT_FOUND", `intent ${action.intent_id ?? ""} is not a live intent of agreement ${agreement.agreement.agreement_id}`);
    } else {
      for (const m of cands) {
        const out = new Findings();
        for (const p of INTENT_POLICIES) p(s, m, out);
        const verdict = verdictOf(out.list);
        if (!chosen || SEVERITY[verdict] < SEVERITY[chosen.verdict] || (verdict === chosen.verdict && out.list.length < chosen.findings.length)) {
          chosen = { m, findings: out.list, verdict };
        }
      }
    }
  } else if (s.delegation.scope.ceilingMinor === undefined) {
    common.add("OVER_BROAD_INTENT", "the delegation evidence carries no per-transaction ceiling");
  }
  const all = chosen ? [...common.list, ...chosen.findings] : common.list;
  // The principal approved exactly this request: the reasons the approval was opened for are cleared.
  const cleared = ctx.approvedReasons;
  const findings = cleared ? all.filter((f) => !(cleared.has(f.code) && REASONS[f.code].verdict === "STEP_UP")) : all;
  return decide(findings, chosen?.m, s);
}

function decide(findings: Finding[], m: PreparedMandate | undefined, s: EvalState): Decision {
  // One code may fire twice with different messages (e.g. two ceilings); reasons list it once.
  const reasons = [...new Set(findings.map((f) => f.code))];
  const verdict = verdictOf(findings);
  const revoke = findings.some((f) => "revoke" in REASONS[f.code]);
  const decisive = findings.find((f) => REASONS[f.code].verdict === verdict);
  const decision: Decision = {
    verdict,
    svc_decision: decisionFor(verdict, revoke),
    reasons,
    messages: findings,
    required_action: revoke ? "REVOKE_DELEGATION" : decisive ? REASONS[decisive.code].requiredAction : "NONE",
  };
  if (m) {
    decision.intent_id = m.mandate.intent_id;
    const amount = amountIn(s, m.mandate.currency);
    if (amount !== undefined) decision.amount_minor = amount;
  } else if (!s.agreement) {
    // Delegation evidence alone (a recorded payment mandate): the amount in the scope's currency.
    const amount = amountIn(s, s.delegation.scope.scope.currency);
    if (amount !== undefined) decision.amount_minor = amount;
  }
  return decision;
}
