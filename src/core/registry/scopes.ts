/**
 * API key scopes: the closed list, what each organization type may hold, the default set a key
 * gets when it is requested with just a name, and the resolution of a requested scope list.
 *
 * Rules (docs/registry.md, "Scopes"):
 * - agent operators may hold keys:write, agents:write, verify, registry:read (all by default);
 * - wallets, bank issuers, processors/PSPs and merchants may hold keys:write, registry:read,
 *   inquiries:write, reports:write, subscriptions:write, outcomes:write (all by default). They
 *   do not hold verify: verify checks an agent's action for its own operator (docs/verify.md);
 *   operators do not hold outcomes:write: the party that spends never releases its own spend;
 * - an explicit list must be non-empty, name only known scopes and stay inside what the type
 *   may hold. The result is deduplicated and in SCOPES order.
 */
import { RegistryError } from "./errors.js";
import type { OrgType } from "./orgs.js";

/** Every scope, in a fixed order (the order resolved lists come in). */
export const SCOPES = [
  "keys:write",
  "agents:write",
  "registry:read",
  "verify",
  "inquiries:write",
  "reports:write",
  "subscriptions:write",
  "outcomes:write",
] as const;

/** A scope name. */
export type Scope = (typeof SCOPES)[number];

/** True when `v` is one of SCOPES. */
export function isScope(v: unknown): v is Scope {
  return typeof v === "string" && (SCOPES as readonly string[]).includes(v);
}

const OPERATOR_DEFAULT: readonly Scope[] = ["keys:write", "agents:write", "registry:read", "verify"];
const PAYMENT_SIDE_DEFAULT: readonly Scope[] = ["keys:write", "registry:read", "inquiries:write", "reports:write", "subscriptions:write", "outcomes:write"];

/** The scopes a key of `orgType` gets when it is requested with just a name. */
export function defaultScopes(orgType: OrgType): Scope[] {
  return inOrder(orgType === "agent_operator" ? OPERATOR_DEFAULT : PAYMENT_SIDE_DEFAULT);
}

/** Every scope a key of `orgType` may hold. */
export function allowedScopes(orgType: OrgType): Scope[] {
  return orgType === "agent_operator" ? inOrder(OPERATOR_DEFAULT) : inOrder(PAYMENT_SIDE_DEFAULT);
}

/** `scopes` deduplicated, in SCOPES order. */
export function inOrder(scopes: Iterable<Scope>): Scope[] {
  const set = new Set(scopes);
  return SCOPES.filter((s) => set.has(s));
}

/**
 * The scopes of a new key of `orgType`: the default set when `requested` is undefined, else
 * the requested list checked against the type. Throws RegistryError (SCOPES_EMPTY,
 * SCOPE_UNKNOWN, SCOPE_NOT_ALLOWED).
 */
export function resolveScopes(orgType: OrgType, requested: readonly unknown[] | undefined): Scope[] {
  if (requested === undefined) return defaultScopes(orgType);
  if (requested.length === 0) throw new RegistryError("SCOPES_EMPTY", "scopes must name at least one scope");
  const allowed = new Set(allowedScopes(orgType));
  const out: Scope[] = [];
  for (const s of requested) {
    if (!isScope(s)) {
      throw new RegistryError("SCOPE_UNKNOWN", `scope ${JSON.stringify(s)} is unknown; scopes are ${SCOPES.join(", ")}`);
    }
    if (!allowed.has(s)) throw new RegistryError("SCOPE_NOT_ALLOWED", `scope ${s} is not allowed for a ${orgType} organization`);
    out.push(s);
  }
  return inOrder(out);
}

/** The scopes of `wanted` that `held` lacks (empty when `held` covers `wanted`). */
export function missingScopes(held: readonly Scope[], wanted: readonly Scope[]): Scope[] {
  const have = new Set(held);
  return wanted.filter((s) => !have.has(s));
}
