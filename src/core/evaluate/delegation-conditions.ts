/**
 * The evaluation of delegation conditions at evaluation time (their shape is validated by
 * `validateCondition`, src/core/delegation/conditions.ts).
 *
 * Time conditions are enforced at `ctx.now` (the evaluation time), not at the action's
 * `proposed_at`, which the agent chooses. A `time_window` includes its start and excludes its
 * end; a window whose end is before its start crosses midnight (22:00-06:00 allows 23:30 and
 * 05:59). `business_hours_only` is Monday to Friday 09:00-17:00 in its zone. Everything fails
 * closed: an unknown zone, an unknown condition type, a missing risk score or merchant all
 * produce a finding. A condition of unknown type yields CONDITION_INVALID (the delegation
 * is effectively suspended while a condition cannot be shown to hold).
 */
import type { Condition, MerchantAllowlistCondition } from "../delegation/index.js";
import { WEEKDAY_NAMES, formatMinuteOfDay, localTime, parseMinuteOfDay } from "../time/index.js";
import type { Finding } from "./reasons.js";
import type { Action, EvalContext } from "./types.js";

const BUSINESS_START = 9 * 60;
const BUSINESS_END = 17 * 60;

// Large allowlists are looked up through a set built once per condition object.
const allowSets = new WeakMap<MerchantAllowlistCondition, ReadonlySet<unknown>>();

function merchantAllowed(c: MerchantAllowlistCondition, merchant: string): boolean {
  const list: unknown = c.merchants;
  if (!Array.isArray(list)) return false;
  if (list.length <= 8) return list.includes(merchant);
  let set = allowSets.get(c);
  if (!set) {
    set = new Set<unknown>(list);
    allowSets.set(c, set);
  }
  return set.has(merchant);
}

function timeWindowFinding(start: unknown, end: unknown, zone: string, now: number): Finding | undefined {
  const s = parseMinuteOfDay(start);
  const e = parseMinuteOfDay(end);
  const local = s === undefined || e === undefined ? undefined : localTime(zone, now);
  if (s === undefined || e === undefined || local === undefined) {
    return {
      code: "OUTSIDE_TIME_WINDOW",
      message: `time_window ${String(start)}-${String(end)} in ${String(zone)} cannot be evaluated (invalid time or zone), so it does not hold`,
    };
  }
  const m = local.minuteOfDay;
  const inside = s < e ? m >= s && m < e : m >= s || m < e;
  if (inside) return undefined;
  return {
    code: "OUTSIDE_TIME_WINDOW",
    message: `${formatMinuteOfDay(m)} in ${zone} is outside ${String(start)}-${String(end)}`,
  };
}

function businessHoursFinding(zone: string, now: number): Finding | undefined {
  const local = localTime(zone, now);
  if (local === undefined) {
    return { code: "OUTSIDE_BUSINESS_HOURS", message: `business_hours_only in ${String(zone)} cannot be evaluated (invalid zone), so it does not hold` };
  }
  const m = local.minuteOfDay;
  if (local.weekday >= 1 && local.weekday <= 5 && m >= BUSINESS_START && m < BUSINESS_END) return undefined;
  return {
    code: "OUTSIDE_BUSINESS_HOURS",
    message: `${WEEKDAY_NAMES[local.weekday] ?? "?"} ${formatMinuteOfDay(m)} in ${zone} is outside business hours (Monday-Friday 09:00-17:00)`,
  };
}

/**
 * Why a principal_present condition applies to `action` (" for ..." or ""), or undefined when
 * the agent may act alone ("human not present"). Fails closed: another currency than the
 * threshold's, or no category where categories are named, needs the principal.
 */
function presenceNeeded(c: Condition & { type: "principal_present" }, action: Action | undefined): string | undefined {
  const above = c.above_amount;
  const cats = c.categories;
  if (above === undefined && cats === undefined) return "";
  const reasons: string[] = [];
  if (above !== undefined) {
    if (action === undefined || action.currency !== c.currency)
      reasons.push(` for an action not in ${String(c.currency)} (threshold ${String(above)} ${String(c.currency)})`);
    else if (!(action.amount <= above)) reasons.push(` for an amount above ${String(above)} ${String(c.currency)}`);
  }
  if (Array.isArray(cats)) {
    const cat = action?.category;
    if (cat === undefined) reasons.push(" for an action without a category");
    else if (cats.includes(cat)) reasons.push(` for category ${JSON.stringify(cat)}`);
  }
  return reasons.length > 0 ? reasons.join(" and") : undefined;
}

/**
 * The finding of one condition at `ctx.now`, or undefined when it holds. With no action,
 * a merchant_allowlist finds no merchant and fails.
 */
export function evaluateCondition(c: Condition, action: Action | undefined, ctx: EvalContext): Finding | undefined {
  switch (c.type) {
    case "time_window":
      return timeWindowFinding(c.start, c.end, c.timezone, ctx.now);
    case "business_hours_only":
      return businessHoursFinding(c.timezone, ctx.now);
    case "max_risk_score": {
      const score = ctx.riskScore;
      if (typeof c.value !== "number" || !Number.isFinite(c.value)) {
        return { code: "RISK_SCORE_ABOVE_LIMIT", message: `max_risk_score value ${String(c.value)} is not a number, so no score can satisfy it` };
      }
      if (score === undefined || !Number.isFinite(score)) {
        return { code: "RISK_SCORE_UNKNOWN", message: `max_risk_score ${c.value} holds but no risk score was supplied` };
      }
      if (score > c.value) return { code: "RISK_SCORE_ABOVE_LIMIT", message: `risk score ${score} is above the limit ${c.value}` };
      return undefined;
    }
    case "merchant_allowlist": {
      const merchant = action?.merchant;
      if (typeof merchant !== "string" || merchant.length === 0) {
        return { code: "MERCHANT_NOT_ALLOWED", message: "merchant_allowlist holds but the action names no merchant" };
      }
      if (merchantAllowed(c, merchant)) return undefined;
      return { code: "MERCHANT_NOT_ALLOWED", message: `merchant ${JSON.stringify(merchant)} is not on the merchant allowlist` };
    }
    case "principal_present": {
      if (ctx.principalPresent === true) return undefined;
      const why = presenceNeeded(c, action);
      if (why === undefined) return undefined;
      return { code: "PRINCIPAL_NOT_PRESENT", message: `principal_present holds${why} and the principal is not known to be present` };
    }
    default: {
      const type = (c as { type?: unknown }).type;
      return { code: "CONDITION_INVALID", message: `condition of unknown type ${JSON.stringify(type)} cannot be evaluated` };
    }
  }
}

/**
 * Every finding of the delegation's conditions for `action` at `ctx.now` (empty when all
 * hold). Hot path: no Intl call once the zone's offset for the current 15 minutes is cached.
 */
export function evaluateConditions(conditions: readonly Condition[], action: Action | undefined, ctx: EvalContext): Finding[] {
  const out: Finding[] = [];
  for (let i = 0; i < conditions.length; i++) {
    const c = conditions[i];
    if (c === undefined || c === null || typeof c !== "object") {
      out.push({ code: "CONDITION_INVALID", message: `condition ${i + 1} is not an object, so it cannot be evaluated` });
      continue;
    }
    const f = evaluateCondition(c, action, ctx);
    if (f) out.push(f);
  }
  return out;
}
