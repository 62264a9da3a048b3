/**
 * The spend an ALLOW records, built from what was evaluated: the decision's intent and amount
 * (minor units of the intent's currency), and the cumulative limits to re-check inside the
 * lock: the intent's slice, the agreement's parent cumulative maximum and the delegation's
 * cumulative maximum with the action's amount in the delegation's currency (converted with the
 * same rate the evaluation used, rounded up, as the core does), and, for a sub-delegation, its
 * chain's ids, whose stored budgets the spend transaction re-checks. Pure.
 */
import type { Action, Decision, EvalContext, PreparedLink } from "../../core/evaluate/index.js";
import { MoneyError, convertMinor, preparePeriods, toMinor } from "../../core/money/index.js";
import { RecordStoreError, type AllowedSpend, type SpendLimits, type SpendPeriods } from "../../store/index.js";
import type { VerifyCandidate } from "../caches/candidates.js";

/** Options of `allowedSpendFor`. */
export interface AllowedSpendOptions {
  /** RFC 3339 time of the ledger entry. */
  at: string;
  /** The rates the evaluation used (`EvalContext.rate`). */
  rate?: EvalContext["rate"];
  /** The verify answer to store with the spend. */
  decision?: AllowedSpend["decision"];
  /**
   * The delegation's chain as judged: the links read from the STORED ancestors
   * (./stored-chain.ts); each ancestor's period limits count this spend too. Absent: the
   * candidate's own links (for a delegation without a chain, none).
   */
  chain?: readonly PreparedLink[];
}

function amountIn(action: Action, currency: string, rate: EvalContext["rate"]): bigint | undefined {
  const own = toMinor(action.amount, action.currency);
  if (currency === action.currency) return own;
  const r = rate?.(action.currency, currency);
  return r ? convertMinor(own, action.currency, currency, r) : undefined;
}

/**
 * The spend to record for `decision` (an ALLOW) on `candidate`. Throws SPEND_INVALID when the
 * decision is not an ALLOW with an intent and an amount, or when an amount cannot be expressed
 * in a budget's currency (an evaluation that allowed it had the rate, so this is a caller bug).
 */
export function allowedSpendFor(candidate: VerifyCandidate, action: Action, decision: Decision, opts: AllowedSpendOptions): AllowedSpend {
  if (decision.verdict !== "ALLOW" || decision.intent_id === undefined || decision.amount_minor === undefined) {
    throw new RecordStoreError("SPEND_INVALID", "only an ALLOW with an intent and an amount records a spend");
  }
  const mandate = candidate.agreement.mandates.find((m) => m.mandate.intent_id === decision.intent_id);
  if (!mandate) throw new RecordStoreError("SPEND_INVALID", `intent ${decision.intent_id} is not among the candidate's mandates`);
  const limits: SpendLimits = {};
  if (mandate.sliceMinor !== undefined) limits.sliceMinor = mandate.sliceMinor;
  if (candidate.agreement.parentCumulativeMinor !== undefined) limits.parentCumulativeMinor = candidate.agreement.parentCumulativeMinor;
  const d = candidate.delegation;
  const chained = d !== undefined && d.delegation.delegation_chain.length > 0;
  if (d && (d.scope.cumulativeMinor !== undefined || chained)) {
    const currency = d.scope.scope.currency;
    const amountMinor = currency === mandate.mandate.currency ? decision.amount_minor : amountIn(action, currency, opts.rate);
    if (amountMinor === undefined)
      throw new RecordStoreError("SPEND_INVALID", `no ${action.currency}->${currency} rate to express the spend in the delegation's currency`);
    const delegationId = d.delegation.delegation_id;
    if (d.scope.cumulativeMinor !== undefined) limits.delegation = { delegationId, cumulativeMinor: d.scope.cumulativeMinor, currency, amountMinor };
    // Every stored ancestor's budget is re-checked in the spend transaction (src/store/ledger/spend.ts).
    if (chained) limits.chain = { delegationId, ancestorIds: d.delegation.delegation_chain.map((l) => l.delegation_id), currency, amountMinor };
  }
  // Limits per period: the intent's (in its currency) and the delegation's (in the scope's currency).
  const periods: SpendPeriods[] = [];
  if (mandate.periods !== undefined) {
    if ("problem" in mandate.periods) throw new RecordStoreError("SPEND_INVALID", `intent ${decision.intent_id}'s period limits are not usable`);
    periods.push({ owner: "intent", currency: mandate.mandate.currency, amountMinor: decision.amount_minor, periods: mandate.periods });
  }
  if (d?.scope.periods !== undefined) {
    const currency = d.scope.scope.currency;
    const amountMinor = currency === mandate.mandate.currency ? decision.amount_minor : amountIn(action, currency, opts.rate);
    if (amountMinor === undefined)
      throw new RecordStoreError("SPEND_INVALID", `no ${action.currency}->${currency} rate to express the spend in the delegation's currency`);
    periods.push({ owner: "delegation", delegationId: d.delegation.delegation_id, currency, amountMinor, periods: d.scope.periods });
  }
  // Every stored ancestor's period limits count the spend below it (issue 27, rule 5): the
  // spend transaction checks and counts it in each ancestor's windows, under its row lock.
  if (d && d.delegation.delegation_chain.length > 0) {
    for (const pl of opts.chain ?? d.chain) {
      const scope = pl.link.scope;
      if (scope.period_limits === undefined || scope.period_limits.length === 0) continue;
      let prepared;
      try {
        prepared = preparePeriods(scope.period_limits, scope.time_zone, scope.currency);
      } catch (e) {
        if (!(e instanceof MoneyError)) throw e;
        throw new RecordStoreError("SPEND_INVALID", `the period limits of delegation ${pl.link.delegation_id} above this one are not usable: ${e.message}`);
      }
      if (prepared === undefined) continue;
      const amountMinor = scope.currency === mandate.mandate.currency ? decision.amount_minor : amountIn(action, scope.currency, opts.rate);
      if (amountMinor === undefined)
        throw new RecordStoreError(
          "SPEND_INVALID",
          `no ${action.currency}->${scope.currency} rate to express the spend in the currency of delegation ${pl.link.delegation_id}`,
        );
      periods.push({
        owner: "delegation",
        delegationId: pl.link.delegation_id,
        agentId: pl.link.delegate.agent_id,
        currency: scope.currency,
        amountMinor,
        periods: prepared,
      });
    }
  }
  if (periods.length > 0) limits.periods = periods;
  return {
    agreementId: candidate.agreementId,
    intentId: decision.intent_id,
    actionId: action.action_id,
    amountMinor: decision.amount_minor,
    currency: mandate.mandate.currency,
    at: opts.at,
    revision: candidate.revision,
    limits,
    ...(opts.decision ? { decision: opts.decision } : {}),
  };
}
