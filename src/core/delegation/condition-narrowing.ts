/**
 * Whether a child's conditions keep every condition of its parent, identically or narrower.
 *
 * Conditions are conjunctive, so a child may add conditions freely; it may not drop one.
 * Each parent condition must be matched by one child condition that on its own is at least
 * as strict: a time_window in the same zone whose minutes lie inside the parent's window
 * (midnight-crossing windows are handled), a max_risk_score whose value is not above the
 * parent's, a merchant_allowlist that is a subset, and business_hours_only (same zone) or
 * principal_present kept as they are. A malformed parent condition can be matched only by
 * an identical one.
 */
import { canonicalJson } from "../canonical/index.js";
import type { Condition } from "./types.js";
import { parseMinuteOfDay } from "../time/index.js";

type Interval = readonly [number, number];

/** The minutes of a window as half-open intervals within one day. */
function windowIntervals(start: unknown, end: unknown): Interval[] | undefined {
  const s = parseMinuteOfDay(start);
  const e = parseMinuteOfDay(end);
  if (s === undefined || e === undefined || s === e) return undefined;
  return s < e
    ? [[s, e]]
    : [
        [s, 1440],
        [0, e],
      ];
}

function windowInside(child: Condition & { type: "time_window" }, parent: Condition & { type: "time_window" }): boolean {
  if (child.timezone !== parent.timezone) return false;
  const c = windowIntervals(child.start, child.end);
  const p = windowIntervals(parent.start, parent.end);
  if (!c || !p) return false;
  return c.every(([cs, ce]) => p.some(([ps, pe]) => cs >= ps && ce <= pe));
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}

/** True when `child` on its own is at least as strict as `parent`. */
export function conditionNarrows(parent: Condition, child: Condition): boolean {
  if (sameJson(parent, child)) return true;
  if (parent.type !== child.type) return false;
  switch (parent.type) {
    case "time_window":
      return windowInside(child as typeof parent, parent);
    case "max_risk_score": {
      const c = (child as typeof parent).value;
      return typeof c === "number" && typeof parent.value === "number" && Number.isFinite(c) && c >= 0 && c <= parent.value;
    }
    case "merchant_allowlist": {
      const c = (child as typeof parent).merchants;
      if (!Array.isArray(c) || !Array.isArray(parent.merchants) || c.length === 0) return false;
      const allowed = new Set(parent.merchants);
      return c.every((m) => typeof m === "string" && allowed.has(m));
    }
    case "business_hours_only":
      return (child as typeof parent).timezone === parent.timezone;
    case "principal_present": {
      // The child needs the principal at least wherever the parent does.
      const ch = child as typeof parent;
      const parentAlways = parent.above_amount === undefined && parent.categories === undefined;
      const childAlways = ch.above_amount === undefined && ch.categories === undefined;
      if (childAlways) return true;
      if (parentAlways) return false;
      if (parent.above_amount !== undefined) {
        if (ch.above_amount === undefined || ch.currency !== parent.currency || !(ch.above_amount <= parent.above_amount)) return false;
      }
      if (parent.categories !== undefined) {
        if (!Array.isArray(ch.categories) || !Array.isArray(parent.categories) || !parent.categories.every((x) => ch.categories?.includes(x))) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** A short description of a condition for messages. */
export function describeCondition(c: Condition): string {
  switch (c.type) {
    case "time_window":
      return `time_window ${String(c.start)}-${String(c.end)} ${String(c.timezone)}`;
    case "business_hours_only":
      return `business_hours_only ${String(c.timezone)}`;
    case "max_risk_score":
      return `max_risk_score ${String(c.value)}`;
    case "merchant_allowlist":
      return `merchant_allowlist of ${Array.isArray(c.merchants) ? c.merchants.length : 0} merchants`;
    case "principal_present": {
      const parts = [
        c.above_amount !== undefined ? ` above ${String(c.above_amount)} ${String(c.currency)}` : "",
        Array.isArray(c.categories) ? ` for ${c.categories.join(", ")}` : "",
      ];
      return `principal_present${parts.join("")}`;
    }
    default:
      return `condition ${JSON.stringify((c as { type?: unknown }).type)}`;
  }
}

/**
 * One sentence per parent condition the child drops or widens, each starting with
 * "conditions:". Empty when the child keeps every parent condition (identically or narrower).
 */
export function conditionWidenings(parent: readonly Condition[] | undefined, child: readonly Condition[] | undefined): string[] {
  const out: string[] = [];
  if (parent !== undefined && !Array.isArray(parent)) return ["conditions: the parent's conditions are not a list, so nothing can narrow them"];
  const p = parent ?? [];
  const c = Array.isArray(child) ? child : [];
  for (const pc of p) {
    if (typeof pc !== "object" || pc === null) continue;
    if (c.some((cc) => typeof cc === "object" && cc !== null && conditionNarrows(pc, cc))) continue;
    const sameType = c.filter((cc) => typeof cc === "object" && cc !== null && cc.type === pc.type);
    out.push(
      sameType.length === 0
        ? `conditions: drops ${describeCondition(pc)}`
        : `conditions: widens ${describeCondition(pc)} (the child has ${sameType.map(describeCondition).join(", ")})`,
    );
  }
  return out;
}
