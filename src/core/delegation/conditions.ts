/**
 * Delegation conditions: validation of their shape (their evaluation at evaluation time is the
 * engine's: src/core/evaluate/delegation-conditions.ts).
 *
 * Time conditions are enforced at `ctx.now` (the evaluation time), not at the action's
 * `proposed_at`, which the agent chooses. A `time_window` includes its start and excludes its
 * end; a window whose end is before its start crosses midnight (22:00-06:00 allows 23:30 and
 * 05:59). `business_hours_only` is Monday to Friday 09:00-17:00 in its zone. Everything fails
 * closed: an unknown zone, an unknown condition type, a missing risk score or merchant all
 * produce a finding. A condition of unknown type yields CONDITION_INVALID (the delegation
 * is effectively suspended while a condition cannot be shown to hold).
 */
import { isTimeZone, parseMinuteOfDay } from "../time/index.js";

/** Why a condition is malformed, or undefined when it is valid. Accepts any input. */
export function validateCondition(c: unknown): string | undefined {
  if (typeof c !== "object" || c === null || Array.isArray(c)) return "a condition must be an object";
  const o = c as Record<string, unknown>;
  switch (o.type) {
    case "time_window": {
      const start = parseMinuteOfDay(o.start);
      const end = parseMinuteOfDay(o.end);
      if (start === undefined) return `time_window start ${JSON.stringify(o.start)} is not HH:MM between 00:00 and 23:59`;
      if (end === undefined) return `time_window end ${JSON.stringify(o.end)} is not HH:MM between 00:00 and 23:59`;
      if (start === end) return `time_window ${String(o.start)}-${String(o.end)} is empty (start equals end)`;
      if (!isTimeZone(o.timezone)) return `time_window timezone ${JSON.stringify(o.timezone)} is not an IANA time zone`;
      return undefined;
    }
    case "business_hours_only":
      if (!isTimeZone(o.timezone)) return `business_hours_only timezone ${JSON.stringify(o.timezone)} is not an IANA time zone`;
      return undefined;
    case "max_risk_score":
      if (typeof o.value !== "number" || !Number.isFinite(o.value) || o.value < 0 || o.value > 100) {
        return `max_risk_score value ${JSON.stringify(o.value)} is not a number from 0 to 100`;
      }
      return undefined;
    case "merchant_allowlist":
      if (!Array.isArray(o.merchants) || o.merchants.length === 0) return "merchant_allowlist merchants must be a non-empty array";
      if (!o.merchants.every((m) => typeof m === "string" && m.length > 0)) return "merchant_allowlist merchants must be non-empty strings";
      return undefined;
    case "principal_present": {
      const hasAbove = o.above_amount !== undefined;
      if (hasAbove && (typeof o.above_amount !== "number" || !Number.isFinite(o.above_amount) || o.above_amount < 0)) {
        return `principal_present above_amount ${JSON.stringify(o.above_amount)} is not a number of at least 0`;
      }
      if (hasAbove !== (o.currency !== undefined)) return "principal_present above_amount and currency go together";
      if (o.currency !== undefined && (typeof o.currency !== "string" || !/^[A-Z]{3}$/.test(o.currency)))
        return `principal_present currency ${JSON.stringify(o.currency)} is not three capital letters`;
      if (
        o.categories !== undefined &&
        (!Array.isArray(o.categories) || o.categories.length === 0 || !o.categories.every((c) => typeof c === "string" && c.length > 0))
      ) {
        return "principal_present categories must be a non-empty array of non-empty strings";
      }
      return undefined;
    }
    default:
      return `unknown condition type ${JSON.stringify(o.type)}`;
  }
}
