/**
 * Prepares a delegation once per record revision so that evaluation only reads facts.
 *
 * Never throws on hostile content. A record that cannot be trusted to bound authority fails
 * closed as already expired (`expiresAtMs` 0) and says why in `problems`: an unparseable
 * `granted_at` or `expires_at`, an `expires_at` not after `granted_at`, an unusable scope
 * (its ceilings also become 0) or conditions that are not a list. A malformed condition is
 * listed in `problems` too but does not expire the grant: evaluation already fails that
 * condition closed with a precise message. Chain facts come from `prepareChain`.
 */
import type { PreparedDelegation, PreparedScope } from "./prepared.js";
import { prepareChain } from "./chain.js";
import { validateCondition } from "./conditions.js";
import { parseInstant } from "../time/index.js";
import { prepareScope } from "./scope.js";
import { keyId, parsePublicJwk } from "../jose/index.js";
import type { HashString } from "../canonical/index.js";
import type { Condition, Delegation } from "./types.js";

/** A prepared delegation plus what was wrong with the record (empty when nothing). */
export interface PreparedDelegationWithProblems extends PreparedDelegation {
  problems: string[];
}

function scopeOrZero(d: Delegation, problems: string[]): { scope: PreparedScope; ok: boolean } {
  try {
    if (typeof d.scope !== "object" || d.scope === null) throw new Error("scope is not an object");
    return { scope: prepareScope(d.scope), ok: true };
  } catch (e) {
    problems.push(`scope is unusable (${e instanceof Error ? e.message : "invalid"}); ceilings are treated as 0`);
    return {
      scope: { scope: d.scope, ceilingMinor: 0n, cumulativeMinor: 0n, actionTypes: new Set(), merchants: new Set(), categories: new Set() },
      ok: false,
    };
  }
}

/** Prepares `d` (see the module comment). Synchronous and pure. */
export function prepareDelegation(d: Delegation): PreparedDelegationWithProblems {
  const problems: string[] = [];
  let expire = false;
  const granted = parseInstant(d.granted_at);
  const expires = parseInstant(d.expires_at);
  if (granted === undefined) {
    problems.push(`granted_at ${JSON.stringify(d.granted_at)} is not an RFC 3339 date-time; treated as expired`);
    expire = true;
  }
  if (expires === undefined) {
    problems.push(`expires_at ${JSON.stringify(d.expires_at)} is not an RFC 3339 date-time; treated as expired`);
    expire = true;
  }
  if (granted !== undefined && expires !== undefined && expires <= granted) {
    problems.push(`expires_at ${d.expires_at} is not after granted_at ${d.granted_at}; treated as expired`);
    expire = true;
  }
  const { scope, ok } = scopeOrZero(d, problems);
  if (!ok) expire = true;
  let conditions: Condition[] = [];
  if (Array.isArray(d.conditions)) {
    conditions = d.conditions;
    conditions.forEach((c, i) => {
      const why = validateCondition(c);
      if (why !== undefined) problems.push(`condition ${i + 1}: ${why}`);
    });
  } else {
    problems.push("conditions is not a list; treated as expired");
    expire = true;
  }
  const out: PreparedDelegationWithProblems = {
    delegation: d,
    grantedAtMs: granted ?? 0,
    expiresAtMs: expire ? 0 : (expires ?? 0),
    scope,
    conditions,
    ...prepareChain(d),
    problems,
  };
  const key = d.principal?.public_key;
  if (key !== undefined) {
    try {
      out.principalKid = keyId(parsePublicJwk(key));
    } catch {
      // An unusable principal key matches no signature: every mandate then fails PRINCIPAL_KEY_MISMATCH.
      out.principalKid = "sha256:unusable-principal-key" as HashString;
      problems.push("principal.public_key is not a usable public JWK");
    }
  }
  if (d.reconfirmed_at !== undefined) {
    const re = parseInstant(d.reconfirmed_at);
    if (re === undefined) problems.push(`reconfirmed_at ${JSON.stringify(d.reconfirmed_at)} is not an RFC 3339 date-time; ignored`);
    else out.reconfirmedAtMs = re;
  }
  return out;
}
