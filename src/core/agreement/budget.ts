/**
 * The remaining budget of an agreement, per intent, for the agreement (its parent limit) and for
 * its delegation, from the limits the records declare and the totals the ledger keeps. What an
 * agent reads before it proposes a payment (`GET /v1/agreements/{id}/ledger`, docs/records.md).
 *
 * The rule is the core's budget rule (../money/budget.ts), the one verify enforces: amounts are
 * decimal strings in the currency's minor-unit precision, computed in integer minor units
 * (never floats); `remaining` is `limit - spent`, at least "0"; a limit that is not declared
 * has no `limit` and no `remaining` (nothing bounds it there). A delegation's spend is unknown
 * (`spent` absent) when part of it is in another currency than its scope's, which cannot be
 * added without a rate: verify then refuses (DELEGATION_BUDGET_EXCEEDED), so `remaining` is
 * "0". Each intent's spend is split into `held` (open holds not captured yet) and `captured`
 * when the holds are given. Pure.
 */
import { agreementSpentIn, remainingOf, formatMinor, toMinor, type PeriodLine } from "../money/index.js";
import type { Mandate, ParentLimits } from "./types.js";

/** One budget line. */
export interface BudgetLine {
  currency: string;
  /** The per-payment ceiling, when declared. */
  maximum_amount?: string;
  /** The cumulative limit, when declared. */
  limit?: string;
  /** Counted spend: allowed, authorized or settled, not released. Absent when unknown. */
  spent?: string;
  /** limit - spent, at least 0; absent without a limit. */
  remaining?: string;
  /** Intents: the part of `spent` on holds still open and not captured (ALLOWs the payment side has not captured yet). */
  held?: string;
  /** Intents: the part of `spent` captured (or settled): spent - held. */
  captured?: string;
  /** The limits per period in force (../money/periods.ts `periodLine`), when declared. */
  periods?: PeriodLine[];
}

/** The budget of an agreement. */
export interface BudgetView {
  intents: (BudgetLine & { intent_id: string })[];
  /** The agreement's parent_limits, when declared. */
  agreement?: BudgetLine;
  /** The delegation's scope limits, when the agreement is bound to a delegation with a currency. */
  delegation?: BudgetLine & { delegation_id: string };
}

/** What the budget is computed from. */
export interface BudgetInput {
  mandates: readonly Mandate[];
  parentLimits?: ParentLimits;
  /** Spent per intent (minor units of each intent's currency). */
  spent: ReadonlyMap<string, bigint>;
  /** Held per intent: the part of `spent` on open holds not captured (src/core/agreement/holds.ts); absent: not shown. */
  held?: ReadonlyMap<string, bigint>;
  /** Period lines per intent id, and of the delegation (computed by the caller from the windows' counters: `periodLine`). */
  periods?: { intents: ReadonlyMap<string, PeriodLine[]>; delegation?: PeriodLine[] };
  delegation?: {
    delegationId: string;
    currency: string;
    maximumAmount?: number;
    cumulativeMaximum?: number;
    /** Spent under the delegation in its currency; undefined when it cannot be added (mixed currencies: `spentIn`). */
    spentMinor: bigint | undefined;
  };
}

function line(currency: string, maximum: number | undefined, cumulative: number | undefined, spentMinor: bigint | undefined): BudgetLine {
  const out: BudgetLine = { currency };
  if (maximum !== undefined) out.maximum_amount = formatMinor(toMinor(maximum, currency), currency);
  if (cumulative !== undefined) {
    const limit = toMinor(cumulative, currency);
    out.limit = formatMinor(limit, currency);
    out.remaining = formatMinor(remainingOf(limit, spentMinor), currency);
  }
  if (spentMinor !== undefined) out.spent = formatMinor(spentMinor, currency);
  return out;
}

/** The budget view (see the module comment). */
export function budgetView(b: BudgetInput): BudgetView {
  const intents = b.mandates.map((m) => {
    const spent = b.spent.get(m.intent_id) ?? 0n;
    const out: BudgetLine & { intent_id: string } = { intent_id: m.intent_id, ...line(m.currency, m.maximum_amount, m.cumulative_maximum, spent) };
    if (b.held) {
      const h = b.held.get(m.intent_id) ?? 0n;
      const held = h < spent ? h : spent;
      out.held = formatMinor(held, m.currency);
      out.captured = formatMinor(spent - held, m.currency);
    }
    const periods = b.periods?.intents.get(m.intent_id);
    if (periods) out.periods = periods;
    return out;
  });
  const out: BudgetView = { intents };
  const p = b.parentLimits;
  if (p) {
    out.agreement = line(p.currency, p.maximum_amount, p.cumulative_maximum, agreementSpentIn(b.mandates, b.spent, p.currency));
  }
  const d = b.delegation;
  if (d) {
    out.delegation = { delegation_id: d.delegationId, ...line(d.currency, d.maximumAmount, d.cumulativeMaximum, d.spentMinor) };
    if (b.periods?.delegation) out.delegation.periods = b.periods.delegation;
  }
  return out;
}
