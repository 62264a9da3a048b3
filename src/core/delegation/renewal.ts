/**
 * Renewal is a new grant, never a silent extension. `silentExtension` says why an update of
 * a delegation under the same `delegation_id` would extend authority (later expiry, earlier
 * start, wider scope or conditions, a revoked or expired grant brought back, revocability
 * dropped, privilege lowered, another agent or principal); such an update must be refused
 * and issued as a new grant instead. `renewDelegation` builds that new grant: a fresh id,
 * a fresh window, `renewal_of` naming the old grant, status active, and no approval or
 * re-confirmation carried over (the principal re-confirms the renewal).
 */
import type { Delegation, Privilege } from "./types.js";
import { conditionWidenings } from "./condition-narrowing.js";
import { DelegationError } from "./errors.js";
import { parseInstant } from "../time/index.js";
import { privilegeOf } from "./approval.js";
import { scopeWidenings } from "./scope.js";

const PRIVILEGE_RANK: Record<Privilege, number> = { standard: 0, standing: 1, high: 2 };
const LIVE = new Set(["active", "suspended"]);

function timeChange(field: "expires_at" | "granted_at", before: Delegation, after: Delegation, laterWidens: boolean): string | undefined {
  const b = parseInstant(before[field]);
  const a = parseInstant(after[field]);
  if (a === undefined) return `${field} ${JSON.stringify(after[field])} is unparseable`;
  if (b === undefined) return `${field} changes from the unparseable ${JSON.stringify(before[field])}`;
  if (laterWidens ? a > b : a < b) return `${field} moves ${laterWidens ? "later" : "earlier"}, from ${before[field]} to ${after[field]}`;
  return undefined;
}

/**
 * Why updating `before` to `after` under the same delegation_id would silently extend the
 * grant, or undefined when it does not (or when the ids differ, which is not an update).
 */
export function silentExtension(before: Delegation, after: Delegation): string | undefined {
  if (before.delegation_id !== after.delegation_id) return undefined;
  const reasons: string[] = [];
  const exp = timeChange("expires_at", before, after, true);
  if (exp) reasons.push(exp);
  const start = timeChange("granted_at", before, after, false);
  if (start) reasons.push(start);
  if (!LIVE.has(before.status) && LIVE.has(after.status)) reasons.push(`status moves from ${before.status} to ${after.status}`);
  for (const w of scopeWidenings(before.scope, after.scope)) reasons.push(`scope widens ${w}`);
  reasons.push(...conditionWidenings(before.conditions, after.conditions));
  if (before.revocable !== false && after.revocable === false) reasons.push("revocable changes from true to false");
  const pb = privilegeOf(before);
  const pa = privilegeOf(after);
  if (PRIVILEGE_RANK[pa] < PRIVILEGE_RANK[pb]) reasons.push(`privilege lowers from ${pb} to ${pa}`);
  if (before.agent?.agent_id !== after.agent?.agent_id)
    reasons.push(`agent changes from ${String(before.agent?.agent_id)} to ${String(after.agent?.agent_id)}`);
  if (before.principal?.type !== after.principal?.type || before.principal?.id !== after.principal?.id) reasons.push("principal changes");
  if (reasons.length === 0) return undefined;
  return `${reasons.join("; ")}: a renewal must be a new grant whose renewal_of names ${before.delegation_id}`;
}

/** The new grant's own fields; anything else is copied from the old grant. */
export type RenewalInit = Pick<Delegation, "delegation_id" | "granted_at" | "expires_at"> &
  Partial<
    Pick<
      Delegation,
      "purpose" | "scope" | "conditions" | "approval" | "privilege" | "delegation_chain" | "intent_agreement" | "revocable" | "revocation_endpoint"
    >
  >;

/**
 * Builds the grant that renews `old`. Throws DelegationError RENEWAL_SAME_ID when the id is
 * reused, RENEWAL_WINDOW_INVALID when a time is unparseable or expires_at is not after
 * granted_at.
 */
export function renewDelegation(old: Delegation, init: RenewalInit): Delegation {
  if (typeof init.delegation_id !== "string" || init.delegation_id.length === 0 || init.delegation_id === old.delegation_id) {
    throw new DelegationError("RENEWAL_SAME_ID", `a renewal needs a new delegation_id, not ${JSON.stringify(init.delegation_id)}`);
  }
  const g = parseInstant(init.granted_at);
  const e = parseInstant(init.expires_at);
  if (g === undefined || e === undefined) {
    throw new DelegationError("RENEWAL_WINDOW_INVALID", "a renewal's granted_at and expires_at must be RFC 3339 date-times");
  }
  if (e <= g) throw new DelegationError("RENEWAL_WINDOW_INVALID", `a renewal's expires_at ${init.expires_at} must be after its granted_at ${init.granted_at}`);
  const { reconfirmed_at: _r, approval: _a, renewal_of: _o, status: _s, ...base } = old;
  return structuredClone({ ...base, ...init, status: "active", renewal_of: old.delegation_id });
}
