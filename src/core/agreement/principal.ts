/**
 * The principal key of an agreement: every live mandate is signed by, and names in
 * `principal.public_key`, the same key. Revocations verify against it and amendments,
 * additions and revocations may only be signed with it.
 */
import { keyId, parsePublicJwk, type PublicJwk, type Signer } from "../jose/index.js";
import { AgreementError } from "./errors.js";
import type { Mandate } from "./types.js";

/** The principal key every mandate names, or a sentence saying why there is none. Never throws. */
export function sharedPrincipalKey(mandates: readonly Mandate[]): PublicJwk | string {
  let shared: PublicJwk | undefined;
  for (const [i, m] of mandates.entries()) {
    let key: PublicJwk;
    try {
      key = parsePublicJwk(m.principal.public_key);
    } catch {
      return `mandate ${i} names no usable principal public_key`;
    }
    if (shared === undefined) shared = key;
    else if (keyId(shared) !== keyId(key)) return `mandate ${i} is signed by another principal key than mandate 0`;
  }
  return shared ?? "the agreement holds no mandate";
}

/**
 * Throws AgreementError (SIGNER_NOT_PRINCIPAL) unless every mandate that names a principal key
 * names `signer`'s (mandates not yet signed name none and do not constrain the signer).
 */
export function assertSignerIsPrincipal(mandates: readonly Mandate[], signer: Signer): void {
  for (const m of mandates) {
    const k = m.principal.public_key;
    if (k === undefined) continue;
    let kid: string | undefined;
    try {
      kid = keyId(parsePublicJwk(k));
    } catch {
      kid = undefined;
    }
    if (kid !== signer.kid) {
      throw new AgreementError("SIGNER_NOT_PRINCIPAL", `intent ${m.intent_id} names another principal key than the signer's`);
    }
  }
}
