/** The chain's findings at evaluation time (the chain itself is prepared by src/core/delegation/chain.ts). */
import type { PreparedDelegation } from "../delegation/index.js";
import type { Finding } from "./reasons.js";
import type { EvalContext } from "./types.js";

/**
 * Chain findings at evaluation time: CHAIN_BROKEN and CHAIN_SCOPE_WIDENED from the prepared
 * facts, CHAIN_LINK_REVOKED for the first revoked link, DELEGATION_SUSPENDED for the first
 * link stored as suspended (a suspended grant suspends everything below it; none when a link
 * above it is revoked) and CHAIN_LINK_EXPIRED for the first link whose expiry is at or before
 * `ctx.now`. Empty for an intact, live chain.
 */
export function evaluateChain(prepared: PreparedDelegation, ctx: EvalContext): Finding[] {
  const out: Finding[] = [];
  if (prepared.chainBroken !== undefined) out.push({ code: "CHAIN_BROKEN", message: prepared.chainBroken });
  if (prepared.chainWidened !== undefined) out.push({ code: "CHAIN_SCOPE_WIDENED", message: prepared.chainWidened });
  const chain = prepared.chain;
  let revoked = false;
  let expired = false;
  let suspended = false;
  for (let i = 0; i < chain.length; i++) {
    const pl = chain[i];
    if (pl === undefined) continue;
    const id = (pl.link as { delegation_id?: unknown } | undefined)?.delegation_id;
    if (!revoked && (pl.revoked === true || (typeof id === "string" && ctx.revocations.isDelegationRevoked(id)))) {
      revoked = true;
      out.push({ code: "CHAIN_LINK_REVOKED", message: `link ${i + 1} (${id}) is revoked, which invalidates everything below it` });
    }
    if (!revoked && !suspended && pl.suspended === true) {
      suspended = true;
      out.push({ code: "DELEGATION_SUSPENDED", message: `link ${i + 1} (${String(id)}) is suspended, which suspends everything below it` });
    }
    if (!expired && pl.expiresAtMs <= ctx.now) {
      expired = true;
      out.push({
        code: "CHAIN_LINK_EXPIRED",
        message: `link ${i + 1} (${String(id)}) expired at ${String(pl.link?.expires_at)}, which invalidates everything below it`,
      });
    }
  }
  return out;
}
