/**
 * Policies on one live intent (mandate): binding to the delegation, the principal's signature,
 * the agent, the intent's window and breadth, verbs, ceilings and budgets, acknowledgements.
 */
import { checkBudget, formatMinor } from "../../money/index.js";
import { amountIn, type EvalState, type Findings } from "../state.js";
import type { PreparedMandate } from "../types.js";

export type IntentPolicy = (s: EvalState, m: PreparedMandate, out: Findings) => void;

export const intentBound: IntentPolicy = (s, m, out) => {
  const bound = s.delegation.scope.intents;
  if (bound && !bound.has(m.mandate.intent_id)) {
    out.add("INTENT_NOT_BOUND", `intent ${m.mandate.intent_id} is not bound by delegation ${s.delegation.delegation.delegation_id}`);
  }
};

export const intentSignature: IntentPolicy = (s, m, out) => {
  if (m.signature === "missing") {
    out.add("MANDATE_UNSIGNED", `intent ${m.mandate.intent_id} carries no principal signature`);
    return;
  }
  if (m.signature === "invalid") {
    out.add("SIGNATURE_INVALID", `the signature on intent ${m.mandate.intent_id} does not verify over mandate ${m.hash}`);
    return;
  }
  const want = s.delegation.principalKid;
  if (want !== undefined && m.principalKid !== want) {
    out.add("PRINCIPAL_KEY_MISMATCH", `intent ${m.mandate.intent_id} is signed by ${m.principalKid ?? "an unknown key"}, not the delegation principal's key`);
  }
};

export const intentAgent: IntentPolicy = (s, m, out) => {
  const want = s.delegation.delegation.agent.agent_id;
  if (m.mandate.agent.agent_id !== want) {
    out.add("AGENT_MISMATCH", `intent ${m.mandate.intent_id} names agent ${m.mandate.agent.agent_id}, not ${want}`);
  }
};

export const intentWindow: IntentPolicy = (s, m, out) => {
  if (m.notBeforeMs !== undefined && s.ctx.now < m.notBeforeMs) {
    out.add("INTENT_NOT_YET_VALID", `intent ${m.mandate.intent_id} is valid from ${m.mandate.not_before ?? ""}`);
  } else if (m.expiresAtMs !== undefined && !(s.ctx.now < m.expiresAtMs)) {
    out.add("INTENT_EXPIRED", `intent ${m.mandate.intent_id} expired at ${m.mandate.expires_at ?? ""}`);
  }
};

/** An intent with no expiry or no per-transaction ceiling is over-broad: the principal confirms. */
export const intentBreadth: IntentPolicy = (_s, m, out) => {
  const missing: string[] = [];
  if (m.mandate.expires_at === undefined) missing.push("expiry");
  if (m.mandate.maximum_amount === undefined) missing.push("per-transaction ceiling");
  if (missing.length > 0) out.add("OVER_BROAD_INTENT", `intent ${m.mandate.intent_id} has no ${missing.join(" and no ")}`);
};

export const intentVerb: IntentPolicy = (s, m, out) => {
  const verbs = m.mandate.action_types;
  if (verbs && !verbs.includes(s.action.action_type)) {
    out.add("ACTION_NOT_ALLOWED", `action ${s.action.action_type} is not among intent ${m.mandate.intent_id}'s action_types`);
  }
};

export const intentAmount: IntentPolicy = (s, m, out) => {
  if (s.amountMinor === undefined) return;
  const ccy = m.mandate.currency;
  const amount = amountIn(s, ccy);
  if (amount === undefined) {
    out.add("CURRENCY_MISMATCH", `intent ${m.mandate.intent_id} is in ${ccy}, the action in ${s.action.currency}, and no rate for the day is known`);
    return;
  }
  const fmt = (v: bigint) => `${formatMinor(v, ccy)} ${ccy}`;
  if (m.mandate.maximum_amount !== undefined && m.ceilingMinor === undefined) {
    // Fail closed: a ceiling that cannot be read is not "no ceiling".
    out.add("AMOUNT_ABOVE_INTENT_CEILING", `intent ${m.mandate.intent_id}'s ceiling ${String(m.mandate.maximum_amount)} is not usable in ${ccy}`);
  }
  if (m.ceilingMinor !== undefined && amount > m.ceilingMinor) {
    out.add("AMOUNT_ABOVE_INTENT_CEILING", `${fmt(amount)} is above intent ${m.mandate.intent_id}'s ceiling ${fmt(m.ceilingMinor)}`);
  }
  const a = s.agreement;
  if (a?.parentCeilingMinor !== undefined && amount > a.parentCeilingMinor) {
    out.add("AMOUNT_ABOVE_INTENT_CEILING", `${fmt(amount)} is above the parent ceiling ${fmt(a.parentCeilingMinor)}`);
  }
  if (m.periods !== undefined && "problem" in m.periods) {
    // Fail closed: period limits that cannot be read are not "no period limits".
    out.add("PERIOD_LIMIT_EXCEEDED", `intent ${m.mandate.intent_id}'s period limits are not usable: ${m.periods.problem}`);
  }
  if (a?.ledger.state !== "ok") return;
  if (m.sliceMinor !== undefined && checkBudget(m.sliceMinor, m.spentMinor, amount) === "exceeded") {
    out.add(
      "CUMULATIVE_BUDGET_EXCEEDED",
      `${fmt(m.spentMinor)} spent + ${fmt(amount)} exceeds intent ${m.mandate.intent_id}'s cumulative slice ${fmt(m.sliceMinor)}`,
    );
  }
  if (a.parentCumulativeMinor !== undefined && checkBudget(a.parentCumulativeMinor, a.totalSpentMinor, amount) === "exceeded") {
    out.add(
      "CUMULATIVE_BUDGET_EXCEEDED",
      `${fmt(a.totalSpentMinor)} spent + ${fmt(amount)} exceeds the parent cumulative maximum ${fmt(a.parentCumulativeMinor)}`,
    );
  }
};

export const intentAcks: IntentPolicy = (_s, m, out) => {
  for (const { role, state } of m.acks) {
    if (state === "missing") out.add("ACKNOWLEDGEMENT_MISSING", `no ${role} acknowledgement of mandate ${m.hash}`);
    else if (state === "outdated") out.add("ACKNOWLEDGEMENT_OUTDATED", `the ${role} acknowledged only an older mandate hash, not ${m.hash}`);
  }
};
