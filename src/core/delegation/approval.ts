/**
 * Human approval of standing and high-privilege delegations.
 *
 * Privilege rule: a grant whose lifetime (`expires_at - granted_at`) exceeds seven days is
 * "standing" whatever it declares; otherwise its explicit `privilege` applies, defaulting to
 * "standard". An explicit privilege can therefore raise the level ("high" for large ceilings)
 * but never lower a long-lived grant to "standard". Standing and high grants need
 * HUMAN_APPROVAL evidence approved no later than `granted_at`, and re-confirmation at least
 * every `ctx.policy.reconfirmEveryMs` (counted from the latest of `reconfirmed_at` and the
 * approval; a `reconfirmed_at` in the future is ignored).
 */
import type { EvalContext } from "../evaluate/types.js";
import type { PreparedDelegation } from "./prepared.js";
import type { Finding } from "../evaluate/reasons.js";
import { formatInstant, parseInstant } from "../time/index.js";
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

/** Why the approval does not count, or its approval time when it does. */
function approvalState(prepared: PreparedDelegation): { problem: string } | { approvedAtMs: number } {
  const a: unknown = prepared.delegation.approval;
  if (a === undefined) return { problem: "carries no approval" };
  if (typeof a !== "object" || a === null) return { problem: "carries an approval that is not an object" };
  const o = a as Record<string, unknown>;
  if (o.type !== "HUMAN_APPROVAL") return { problem: `carries approval of type ${JSON.stringify(o.type)}, not HUMAN_APPROVAL` };
  if (typeof o.approved_by !== "string" || o.approved_by.length === 0) return { problem: "carries a HUMAN_APPROVAL that names no approver" };
  const at = parseInstant(o.approved_at);
  if (at === undefined) return { problem: `carries a HUMAN_APPROVAL with an unparseable approved_at ${JSON.stringify(o.approved_at)}` };
  if (at > prepared.grantedAtMs) {
    return { problem: `was approved at ${String(o.approved_at)}, after it was granted at ${String(prepared.delegation.granted_at)}` };
  }
  return { approvedAtMs: at };
}

/**
 * HUMAN_APPROVAL_MISSING and RECONFIRMATION_OVERDUE for standing and high-privilege grants;
 * empty for standard grants.
 */
export function evaluateApproval(prepared: PreparedDelegation, ctx: EvalContext): Finding[] {
  const privilege = preparedPrivilege(prepared);
  if (privilege === "standard") return [];
  const out: Finding[] = [];
  const state = approvalState(prepared);
  if ("problem" in state) {
    out.push({ code: "HUMAN_APPROVAL_MISSING", message: `this ${privilege} delegation ${state.problem}` });
  }
  let last = "approvedAtMs" in state ? state.approvedAtMs : prepared.grantedAtMs;
  const re = prepared.reconfirmedAtMs;
  if (re !== undefined && re <= ctx.now && re > last) last = re;
  const age = ctx.now - last;
  if (age > ctx.policy.reconfirmEveryMs) {
    const days = Math.floor(age / 86_400_000);
    const every = Math.floor(ctx.policy.reconfirmEveryMs / 86_400_000);
    out.push({
      code: "RECONFIRMATION_OVERDUE",
      message: `this ${privilege} delegation was last confirmed at ${formatInstant(last)} (${days} days ago); it must be re-confirmed every ${every} days`,
    });
  }
  return out;
}
