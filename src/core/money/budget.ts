/**
 * The budget rule, in one place. Every cumulative limit Writ enforces or shows (an intent's
 * slice, an agreement's parent cumulative maximum, a delegation's and each stored ancestor's
 * cumulative maximum) is checked and reported with these functions: by the evaluator
 * (src/core/evaluate/policies), by the spend transaction under the row locks
 * (src/store/ledger/spend.ts) and by the read API's budget view (../agreement/budget.ts).
 *
 * - Spend is kept per currency, in integer minor units (bigint), never as floats.
 * - Mixed currencies: the spend counted against a limit in currency C is the spend in C; when
 *   any positive spend is in another currency it cannot be added without a rate and the spend
 *   is UNKNOWN (`spentIn` answers undefined). A check against an unknown spend fails closed.
 * - A limit holds `amount` on top of `spent` when `spent + amount <= limit`.
 * - What is left: `limit - spent`, at least 0; 0 when the spend is unknown.
 * - An agreement's total is kept in its ledger currency (its parent_limits' currency, else its
 *   first intent's) and adds the spend of the intents in that currency.
 * - Limits per period (a calendar day, week, month, year, a rolling window, counts) apply the
 *   same rule per window: ./periods.ts (`checkPeriod`, `windowAt`), used by the same three.
 * Pure.
 */

/** Spend by currency (minor units of each). */
export type SpendByCurrency = Iterable<readonly [string, bigint]>;

/**
 * The spend in `currency` of spend kept by currency: the sum in it, or undefined when any
 * positive spend is in another currency (it cannot be added without a rate). Without a
 * currency (null), only the absence of positive spend is known: 0, else undefined.
 */
export function spentIn(byCurrency: SpendByCurrency, currency: string | null): bigint | undefined {
  let total = 0n;
  for (const [ccy, v] of byCurrency) {
    if (ccy === currency) total += v;
    else if (v > 0n) return undefined;
  }
  return total;
}

/** The spend of several sources by currency, added up (the stored totals and a batch's spends). */
export function addSpend(...sources: (SpendByCurrency | undefined)[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const s of sources) for (const [ccy, v] of s ?? []) out.set(ccy, (out.get(ccy) ?? 0n) + v);
  return out;
}

/** The outcome of checking a cumulative limit: within it, above it, or unknown (the spend so far is unknown). */
export type BudgetCheck = "within" | "exceeded" | "unknown";

/** Whether `amountMinor` on top of `spentMinor` stays within `limitMinor` (see the module comment). */
export function checkBudget(limitMinor: bigint, spentMinor: bigint | undefined, amountMinor: bigint): BudgetCheck {
  if (spentMinor === undefined) return "unknown";
  return spentMinor + amountMinor > limitMinor ? "exceeded" : "within";
}

/** What is left of `limitMinor`: `limit - spent`, at least 0; 0 when the spend is unknown. */
export function remainingOf(limitMinor: bigint, spentMinor: bigint | undefined): bigint {
  if (spentMinor === undefined) return 0n;
  const left = limitMinor - spentMinor;
  return left > 0n ? left : 0n;
}

/** What an agreement's total is computed from: its intents' currencies and its parent limits' currency. */
export interface AgreementIntents {
  mandates: readonly { intent_id: string; currency: string }[];
  parent_limits?: { currency: string } | undefined;
}

/** The currency an agreement's total is kept in: its parent_limits' currency, else its first intent's. */
export function ledgerCurrencyOf(a: AgreementIntents): string | undefined {
  return a.parent_limits?.currency ?? a.mandates[0]?.currency;
}

/** The agreement's total in `currency`: the spend (by intent id) of its intents in that currency. */
export function agreementSpentIn(mandates: AgreementIntents["mandates"], spentByIntent: ReadonlyMap<string, bigint>, currency: string | undefined): bigint {
  let total = 0n;
  for (const m of mandates) if (m.currency === currency) total += spentByIntent.get(m.intent_id) ?? 0n;
  return total;
}

/**
 * The agreement's total as a delegation budget in `currency` counts it when nothing else is
 * known: its ledger total when kept in `currency`; undefined when kept in another currency, or
 * when (without parent_limits) its intents are in several currencies (the others are left out
 * of the total, so it is not the whole spend).
 */
export function agreementTotalAs(a: AgreementIntents, totalMinor: bigint, currency: string): bigint | undefined {
  const ledgerCurrency = ledgerCurrencyOf(a);
  const mixed = !a.parent_limits && a.mandates.some((m) => m.currency !== ledgerCurrency);
  return ledgerCurrency === currency && !mixed ? totalMinor : undefined;
}
