/**
 * Amount policies at delegation level: a usable amount, the scope's per-transaction ceiling
 * and its cumulative total (spent under the delegation plus this action).
 */
import { agreementTotalAs, checkBudget, formatMinor } from "../../money/index.js";
import { amountIn, type EvalState, type Findings } from "../state.js";

export function usableAmount(s: EvalState, out: Findings): void {
  if (s.amountMinor === undefined) {
    out.add("AMOUNT_INVALID", `amount ${String(s.action.amount)} is not usable in ${s.action.currency}`);
  }
}

export function delegationAmount(s: EvalState, out: Findings): void {
  const { scope } = s.delegation;
  if (s.amountMinor === undefined) return;
  if (scope.ceilingMinor === undefined && scope.cumulativeMinor === undefined) return;
  const ccy = scope.scope.currency;
  const amount = amountIn(s, ccy);
  if (amount === undefined) {
    out.add("CURRENCY_MISMATCH", `no ${s.action.currency}->${ccy} rate is known to compare with the delegation's limits`);
    return;
  }
  if (scope.ceilingMinor !== undefined && amount > scope.ceilingMinor) {
    out.add(
      "AMOUNT_ABOVE_DELEGATION_CEILING",
      `${formatMinor(amount, ccy)} ${ccy} is above the delegation ceiling ${formatMinor(scope.ceilingMinor, ccy)} ${ccy}`,
    );
  }
  if (scope.cumulativeMinor !== undefined) {
    const spent = s.ctx.delegationSpentMinor ?? agreementTotalIn(s, ccy);
    const check = checkBudget(scope.cumulativeMinor, spent, amount);
    if (check === "unknown") {
      out.add("LEDGER_TOTAL_UNKNOWN", "the delegation has a cumulative maximum and its spend so far is unknown");
    } else if (check === "exceeded") {
      out.add(
        "DELEGATION_BUDGET_EXCEEDED",
        `${formatMinor(spent ?? 0n, ccy)} spent + ${formatMinor(amount, ccy)} exceeds the delegation's cumulative maximum ${formatMinor(scope.cumulativeMinor, ccy)} ${ccy}`,
      );
    }
  }
}

/** The agreement's ledger total when it is known and kept in `currency` (the budget rule's `agreementTotalAs`). */
function agreementTotalIn(s: EvalState, currency: string): bigint | undefined {
  const a = s.agreement;
  if (!a || a.ledger.state !== "ok") return undefined;
  return agreementTotalAs(a.agreement, a.totalSpentMinor, currency);
}
