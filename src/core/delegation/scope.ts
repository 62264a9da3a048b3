/**
 * Delegation scopes: preparing one for the hot path (amounts as bigint minor units, lists as
 * sets) and deciding whether a child scope only narrows its parent.
 *
 * List semantics (from the Scope type): an absent `action_types`, `merchants` or `categories`
 * restricts nothing, while a present list (even an empty one) allows exactly its members.
 * `intents` differs: absent or empty binds every intent of the agreement.
 * Money is compared only as bigint minor units, never as floats.
 */
import { MoneyError, formatMinor, isIsoCurrency, preparePeriods, toMinor, type PreparedPeriodLimit, type PreparedPeriods } from "../money/index.js";
import type { PreparedScope } from "./prepared.js";
import type { Scope } from "./types.js";

/** The list fields of a scope, in the order widenings are reported. */
export const SCOPE_LIST_FIELDS = ["action_types", "merchants", "categories", "intents"] as const;
export type ScopeListField = (typeof SCOPE_LIST_FIELDS)[number];

/**
 * Prepares a scope for evaluation. Throws MoneyError when the currency is unknown or an
 * amount is negative, not finite or has more decimals than the currency allows.
 */
export function prepareScope(scope: Scope): PreparedScope {
  const out: PreparedScope = { scope };
  if (scope.maximum_amount !== undefined) out.ceilingMinor = toMinor(scope.maximum_amount, scope.currency);
  // Without an amount the currency only has to be an ISO 4217 code (an implicit delegation of
  // an agreement without mandates names XXX); an amount needs a payment currency (toMinor).
  else if (!isIsoCurrency(scope.currency)) throw new MoneyError(`unknown currency ${String(scope.currency)}`);
  if (scope.cumulative_maximum !== undefined) out.cumulativeMinor = toMinor(scope.cumulative_maximum, scope.currency);
  const periods = preparePeriods(scope.period_limits, scope.time_zone, scope.currency);
  if (periods) out.periods = periods;
  const actionTypes = listSet(scope.action_types, false);
  if (actionTypes) out.actionTypes = actionTypes;
  const merchants = listSet(scope.merchants, false);
  if (merchants) out.merchants = merchants;
  const categories = listSet(scope.categories, false);
  if (categories) out.categories = categories;
  const intents = listSet(scope.intents, true);
  if (intents) out.intents = intents;
  return out;
}

/** A list as a set; undefined when it restricts nothing. */
function listSet(list: unknown, emptyMeansAll: boolean): ReadonlySet<string> | undefined {
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) return new Set<string>(); // malformed: allow nothing (fail closed)
  if (emptyMeansAll && list.length === 0) return undefined;
  return new Set(list.filter((x): x is string => typeof x === "string"));
}

/** True when the list field restricts anything in this scope. */
function restricts(scope: Scope, field: ScopeListField): boolean {
  const v = scope[field];
  if (v === undefined) return false;
  return field === "intents" ? !Array.isArray(v) || v.length > 0 : true;
}

type MinorRead = { ok: true; minor: bigint | undefined } | { ok: false };

function readMinor(amount: unknown, currency: string): MinorRead {
  if (amount === undefined) return { ok: true, minor: undefined };
  if (typeof amount !== "number") return { ok: false };
  try {
    return { ok: true, minor: toMinor(amount, currency) };
  } catch {
    return { ok: false };
  }
}

function money(minor: bigint, currency: string): string {
  return formatMinor(minor, currency);
}

function amountWidening(field: "maximum_amount" | "cumulative_maximum", parent: Scope, child: Scope, sameCurrency: boolean): string | undefined {
  const p = readMinor(parent[field], parent.currency);
  const c = readMinor(child[field], child.currency);
  if (!c.ok) return `${field}: ${String(child[field])} is not a valid amount in ${child.currency}`;
  if (!p.ok) return `${field}: the parent's ${String(parent[field])} is not a valid amount in ${parent.currency}, so nothing can narrow it`;
  if (p.minor === undefined) return undefined;
  if (c.minor === undefined) return `${field}: absent while the parent's is ${money(p.minor, parent.currency)} ${parent.currency}`;
  if (sameCurrency && c.minor > p.minor) {
    return `${field}: ${money(c.minor, child.currency)} > ${money(p.minor, parent.currency)} ${parent.currency}`;
  }
  return undefined;
}

function listWidening(field: ScopeListField, parent: Scope, child: Scope): string | undefined {
  if (!restricts(parent, field)) return undefined;
  if (!restricts(child, field)) return `${field}: absent while the parent restricts them`;
  const p = parent[field];
  const c = child[field];
  if (!Array.isArray(p) || !Array.isArray(c)) return `${field}: not a list of strings`;
  const allowed = new Set(p);
  const extra = c.filter((x) => !allowed.has(x));
  if (extra.length === 0) return undefined;
  const shown = extra
    .slice(0, 5)
    .map((x) => JSON.stringify(x))
    .join(", ");
  return `${field}: ${shown}${extra.length > 5 ? ` and ${extra.length - 5} more` : ""} not in the parent's ${field}`;
}

/**
 * One human sentence per field in which `child` is wider than `parent`; each sentence starts
 * with the field's name. An empty array means the child is a valid narrowing.
 * Amounts are compared only when the currencies agree (a currency change is itself reported).
 */
export function scopeWidenings(parent: Scope, child: Scope): string[] {
  const out: string[] = [];
  const sameCurrency = parent.currency === child.currency;
  if (!sameCurrency) out.push(`currency: ${String(child.currency)} differs from the parent's ${String(parent.currency)}`);
  for (const field of ["maximum_amount", "cumulative_maximum"] as const) {
    const w = amountWidening(field, parent, child, sameCurrency);
    if (w) out.push(w);
  }
  for (const field of SCOPE_LIST_FIELDS) {
    const w = listWidening(field, parent, child);
    if (w) out.push(w);
  }
  const periods = periodWidening(parent, child, sameCurrency);
  if (periods) out.push(periods);
  if (child.refunds_restore_budget === true && parent.refunds_restore_budget !== true) out.push("refunds_restore_budget: true where the parent's is not");
  return out;
}

/** A period limit as named in a widening: "day" (in the zone), "rolling PT24H". */
function periodLabel(l: PreparedPeriodLimit, timeZone: string): string {
  return l.limit.rolling !== undefined ? `rolling ${l.limit.rolling}` : l.limit.period === "total" ? "total" : `${String(l.limit.period)} in ${timeZone}`;
}

/**
 * Where the child's `period_limits` are wider than the parent's: every limit of the parent must
 * be kept by the child, with the same window (the same calendar period in the same time zone,
 * or the same rolling duration) and an amount and a count no larger (a count or an amount the
 * parent has, the child must have). The child may add limits. The spend transaction counts a
 * child's spend in every stored ancestor's windows as well (src/store/ledger/spend.ts); this
 * rule makes the child's record say what it is held to.
 */
function periodWidening(parent: Scope, child: Scope, sameCurrency: boolean): string | undefined {
  let p: PreparedPeriods | undefined;
  try {
    p = preparePeriods(parent.period_limits, parent.time_zone, parent.currency);
  } catch (e) {
    return `period_limits: the parent's are not valid (${(e as Error).message}), so nothing can narrow them`;
  }
  if (p === undefined) return undefined;
  let c: PreparedPeriods | undefined;
  try {
    c = preparePeriods(child.period_limits, child.time_zone, child.currency);
  } catch (e) {
    return `period_limits: ${(e as Error).message}`;
  }
  const byKind = new Map((c?.limits ?? []).map((l) => [l.kind, l]));
  for (const pl of p.limits) {
    const what = periodLabel(pl, p.timeZone);
    const cl = byKind.get(pl.kind);
    if (cl === undefined) return `period_limits: the parent's ${what} limit is absent`;
    if (pl.amountMinor !== undefined) {
      if (cl.amountMinor === undefined)
        return `period_limits: the ${what} limit has no amount while the parent's is ${money(pl.amountMinor, parent.currency)} ${parent.currency}`;
      if (sameCurrency && cl.amountMinor > pl.amountMinor)
        return `period_limits: the ${what} amount ${money(cl.amountMinor, child.currency)} > ${money(pl.amountMinor, parent.currency)} ${parent.currency}`;
    }
    if (pl.count !== undefined) {
      if (cl.count === undefined) return `period_limits: the ${what} limit has no count while the parent's is ${pl.count}`;
      if (cl.count > pl.count) return `period_limits: the ${what} count ${cl.count} > ${pl.count}`;
    }
  }
  return undefined;
}
