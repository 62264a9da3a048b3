/**
 * Policies on the delegation itself: revocation (record and index), suspension, the validity
 * window (checked at evaluation time), the acting agent, and the scope's verbs and resources.
 */
import type { EvalState, Findings } from "../state.js";

/** Revocation state may be stale (watch down past its bound): fail closed. */
export function revocationFreshness(s: EvalState, out: Findings): void {
  if (s.ctx.revocationStateStale)
    out.add("REVOCATION_STATE_STALE", "revocation updates have not been received within their bound; refusing to trust possibly stale state");
}

export function delegationStatus(s: EvalState, out: Findings): void {
  const d = s.delegation.delegation;
  if (d.status === "revoked" || s.ctx.revocations.isDelegationRevoked(d.delegation_id)) {
    out.add("DELEGATION_REVOKED", `delegation ${d.delegation_id} is revoked`);
  } else if (d.status === "suspended") {
    out.add("DELEGATION_SUSPENDED", `delegation ${d.delegation_id} is suspended`);
  }
}

export function delegationWindow(s: EvalState, out: Findings): void {
  const p = s.delegation;
  if (s.ctx.now < p.grantedAtMs) {
    out.add("DELEGATION_NOT_YET_VALID", `delegation is granted from ${p.delegation.granted_at}`);
  } else if (!(s.ctx.now < p.expiresAtMs)) {
    out.add("DELEGATION_EXPIRED", `delegation expired at ${p.delegation.expires_at}`);
  }
}

export function actingAgent(s: EvalState, out: Findings): void {
  const want = s.delegation.delegation.agent.agent_id;
  if (s.action.agent_id !== undefined && s.action.agent_id !== want) {
    out.add("AGENT_MISMATCH", `agent ${s.action.agent_id} is not the delegate (${want})`);
  }
}

export function scopeResources(s: EvalState, out: Findings): void {
  const { actionTypes, merchants, categories } = s.delegation.scope;
  const a = s.action;
  if (actionTypes && !actionTypes.has(a.action_type)) {
    out.add("ACTION_NOT_ALLOWED", `action ${a.action_type} is not among the delegation's action_types`);
  }
  if (merchants && (a.merchant === undefined || !merchants.has(a.merchant))) {
    out.add(
      "MERCHANT_NOT_IN_SCOPE",
      a.merchant === undefined
        ? "the action names no merchant and the delegation restricts merchants"
        : `merchant ${a.merchant} is outside the delegation's merchants`,
    );
  }
  if (categories && a.category !== undefined && !categories.has(a.category)) {
    out.add("CATEGORY_NOT_IN_SCOPE", `category ${a.category} is outside the delegation's categories`);
  }
}
