/**
 * Status conditions (metav1.Condition) and the decision whether a status write is needed. Pure.
 *
 * Promises: `lastTransitionTime` changes only when a condition's `status` changes (a new reason
 * or message keeps it); every condition carries the generation it was computed for; the list
 * is exactly the desired types, in their order (the controller owns `.status`). A message is
 * cut to the CRD's 32768-character limit.
 */
import { canonicalJson } from "../core/canonical/index.js";
import type { ConditionReason } from "./reasons.js";

/** True, False or Unknown. */
export type ConditionStatus = "True" | "False" | "Unknown";

/** What the reconciler wants a condition to say: `reason` is a reason code or a controller reason (./reasons.ts). */
export interface DesiredCondition {
  type: string;
  status: ConditionStatus;
  reason: ConditionReason;
  message: string;
}

/** A condition as written to `.status.conditions`. */
export interface Condition extends DesiredCondition {
  lastTransitionTime: string;
  observedGeneration: number;
}

/** Longest condition message the CRD accepts. */
export const MAX_CONDITION_MESSAGE = 32_768;

function previous(existing: unknown, type: string): { status?: unknown; lastTransitionTime?: unknown } | undefined {
  if (!Array.isArray(existing)) return undefined;
  for (const c of existing) if (typeof c === "object" && c !== null && (c as { type?: unknown }).type === type) return c as { status?: unknown };
  return undefined;
}

/** The RFC 3339 second-precision form of an instant (what metav1.Time serialises). */
export function conditionTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** The conditions to write: `desired` with transition times carried over from `existing` (see the module comment). */
export function mergeConditions(existing: unknown, desired: readonly DesiredCondition[], generation: number, nowMs: number): Condition[] {
  const now = conditionTime(nowMs);
  return desired.map((d) => {
    const before = previous(existing, d.type);
    const kept = before && before.status === d.status && typeof before.lastTransitionTime === "string" ? before.lastTransitionTime : now;
    const message = d.message.length > MAX_CONDITION_MESSAGE ? `${d.message.slice(0, MAX_CONDITION_MESSAGE - 3)}...` : d.message;
    return { type: d.type, status: d.status, reason: d.reason, message, lastTransitionTime: kept, observedGeneration: generation };
  });
}

/** The condition of `type` in a status, if any. */
export function findCondition(status: unknown, type: string): Condition | undefined {
  const list = (status as { conditions?: unknown } | undefined)?.conditions;
  return previous(list, type) as Condition | undefined;
}

/** True when writing `desired` would change nothing (compared as canonical JSON, key order aside). */
export function statusUnchanged(current: unknown, desired: Record<string, unknown>): boolean {
  if (typeof current !== "object" || current === null) return false;
  try {
    return canonicalJson(current) === canonicalJson(desired);
  } catch {
    return false;
  }
}
