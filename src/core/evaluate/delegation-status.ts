/**
 * The effective status of a delegation at `ctx.now`: what CR status and the API report.
 *
 * In order: revoked when the record says so, the revocation view lists it or any link above
 * it is revoked (a revocation invalidates everything below); expired when the record says
 * so, `ctx.now >= expiresAtMs` or any link above it has expired; suspended when the record
 * says so (or holds an unknown status) or a condition fails now; else active.
 *
 * Conditions without an action: time_window and business_hours_only are always checked;
 * max_risk_score only when `ctx.riskScore` is given and principal_present only when
 * `ctx.principalPresent` is given (a status read has no risk score or presence signal, and
 * their absence must not show every such grant as suspended); merchant_allowlist only when
 * an action is given. A condition of unknown type always suspends.
 */
import { DELEGATION_STATUSES, type DelegationStatus, type PreparedDelegation } from "../delegation/index.js";
import { evaluateCondition } from "./delegation-conditions.js";
import type { Finding } from "./reasons.js";
import type { Action, EvalContext } from "./types.js";

/** The finding of the first condition that fails now (see the module comment), or undefined. */
function failingCondition(prepared: PreparedDelegation, ctx: EvalContext, action: Action | undefined): Finding | undefined {
  for (const c of prepared.conditions) {
    if (typeof c !== "object" || c === null) return { code: "CONDITION_INVALID", message: "a condition is not an object, so it does not hold" };
    if (c.type === "merchant_allowlist" && action === undefined) continue;
    if (c.type === "max_risk_score" && ctx.riskScore === undefined) continue;
    if (c.type === "principal_present" && ctx.principalPresent === undefined) continue;
    const finding = evaluateCondition(c, action, ctx);
    if (finding !== undefined) return finding;
  }
  return undefined;
}

function conditionFailsNow(prepared: PreparedDelegation, ctx: EvalContext, action: Action | undefined): boolean {
  return failingCondition(prepared, ctx, action) !== undefined;
}

/**
 * Why the delegation is suspended at `ctx.now`, in plain words for a status (`suspended: ...`),
 * or undefined when it is not suspended (revoked, expired and active have their own messages).
 * A failing condition names its code and finding (`suspended: Saturday 10:00 in Europe/Berlin is
 * outside business hours (Monday-Friday 09:00-17:00) (OUTSIDE_BUSINESS_HOURS)`).
 */
export function suspensionReason(prepared: PreparedDelegation, ctx: EvalContext, action?: Action): string | undefined {
  if (effectiveStatus(prepared, ctx, action) !== "suspended") return undefined;
  const d = prepared.delegation;
  if (d.status === "suspended") return "suspended: its declared state is suspended";
  if (!DELEGATION_STATUSES.includes(d.status)) return `suspended: its declared state ${JSON.stringify(d.status)} is not a known status`;
  const finding = failingCondition(prepared, ctx, action);
  return finding ? `suspended: ${finding.message} (${finding.code})` : "suspended";
}

/** The delegation's effective status (see the module comment). */
export function effectiveStatus(prepared: PreparedDelegation, ctx: EvalContext, action?: Action): DelegationStatus {
  const d = prepared.delegation;
  if (d.status === "revoked" || ctx.revocations.isDelegationRevoked(d.delegation_id)) return "revoked";
  for (const l of prepared.chain) {
    const id = (l.link as { delegation_id?: unknown } | undefined)?.delegation_id;
    if (l.revoked === true || (typeof id === "string" && ctx.revocations.isDelegationRevoked(id))) return "revoked";
  }
  if (d.status === "expired" || ctx.now >= prepared.expiresAtMs) return "expired";
  for (const l of prepared.chain) if (l.expiresAtMs <= ctx.now) return "expired";
  if (d.status === "suspended" || !DELEGATION_STATUSES.includes(d.status) || conditionFailsNow(prepared, ctx, action)) return "suspended";
  return "active";
}
