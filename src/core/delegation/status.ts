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
import type { Action, EvalContext, PreparedDelegation } from "../evaluate/types.js";
import { DELEGATION_STATUSES, type DelegationStatus } from "./types.js";
import { evaluateCondition } from "./conditions.js";

function conditionFailsNow(prepared: PreparedDelegation, ctx: EvalContext, action: Action | undefined): boolean {
  for (const c of prepared.conditions) {
    if (typeof c !== "object" || c === null) return true;
    if (c.type === "merchant_allowlist" && action === undefined) continue;
    if (c.type === "max_risk_score" && ctx.riskScore === undefined) continue;
    if (c.type === "principal_present" && ctx.principalPresent === undefined) continue;
    if (evaluateCondition(c, action, ctx) !== undefined) return true;
  }
  return false;
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
