/**
 * Human approval of standing and high-privilege delegations.
 *
 * Privilege rule: a grant whose lifetime (`expires_at - granted_at`) exceeds seven days is
 * "standing" whatever it declares; otherwise its explicit `privilege` applies, defaulting to
 * "standard". An explicit privilege can therefore raise the level ("high" for large ceilings)
 * but never lower a long-lived grant to "standard". Standing and high grants need
 * HUMAN_APPROVAL evidence approved no later than `granted_at`, and re-confirmation at least
 * every `ctx.policy.reconfirmEveryMs` (counted from the latest of `reconfirmed_at` and the
 * approval; a `reconfirmed_at` in the future is ignored): `evaluateApproval`,
 * src/core/evaluate/delegation-approval.ts.
 */
import type { PreparedDelegation } from "./prepared.js";
import { parseInstant } from "../time/index.js";
import type { Delegation, Privilege } from "./types.js";

/** Lifetime above which a grant is "standing": seven days. */
export const STANDING_LIFETIME_MS = 7 * 24 * 3600_000;

function privilegeFor(explicit: unknown, lifetimeMs: number): Privilege {
  if (explicit === "high") return "high";
  if (!(lifetimeMs <= STANDING_LIFETIME_MS)) return "standing"; // NaN (unparseable) is standing too
  return explicit === "standing" ? "standing" : "standard";
}

/** The delegation's privilege level (see the module comment for the rule). */
export function privilegeOf(delegation: Delegation): Privilege {
  const granted = parseInstant(delegation.granted_at);
  const expires = parseInstant(delegation.expires_at);
  const lifetime = granted === undefined || expires === undefined ? Number.NaN : expires - granted;
  return privilegeFor(delegation.privilege, lifetime);
}

/** Privilege of a prepared delegation (its times already parsed). */
export function preparedPrivilege(prepared: PreparedDelegation): Privilege {
  return privilegeFor(prepared.delegation.privilege, prepared.expiresAtMs - prepared.grantedAtMs);
}
