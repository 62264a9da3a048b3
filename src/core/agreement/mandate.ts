/**
 * Mandate hashing and signing.
 *
 * Promises: `mandateHash(m)` is SHA-256 of JCS(mandate without `signature`), so it covers
 * `algorithm`, `rendering` and `principal.public_key`. The signature is a flattened JWS
 * (protected `typ` `svc-mandate+jws`) by `principal.public_key` over exactly those canonical
 * bytes. `verifyMandate` never throws: anything it cannot confirm is "invalid".
 */
import { canonicalBytes, hashWithout, type HashString } from "../canonical/index.js";
import { signRecord, unsignedPart, verifySignedRecord, type Signer } from "../jose/index.js";
import type { SignatureState } from "./prepared.js";
import type { Mandate } from "./types.js";

/** The protected-header `typ` of a mandate signature. */
export const MANDATE_TYP = "svc-mandate+jws";

/** The mandate hash: SHA-256 of the canonical mandate without `signature`. Throws only for values JSON cannot carry. */
export function mandateHash(m: Mandate): HashString {
  return hashWithout(m, "signature");
}

/** The exact bytes a mandate signature covers: JCS(mandate without `signature`). */
export function mandateSigningBytes(m: Mandate): Buffer {
  return canonicalBytes(unsignedPart(m));
}

/**
 * Signs a mandate as its principal: sets `algorithm` and `principal.public_key` from the
 * signer first (both are covered by the signature), then signs the canonical bytes. Returns a
 * new mandate; the input is not changed.
 */
export async function signMandate(m: Mandate, signer: Signer): Promise<Mandate> {
  const base: Mandate = {
    ...unsignedPart(m),
    algorithm: signer.alg,
    principal: { ...m.principal, public_key: signer.publicJwk },
  };
  const signature = await signRecord(unsignedPart(base), signer, MANDATE_TYP);
  return { ...base, signature };
}

/**
 * Signature state of a mandate: "missing" without `signature`; "invalid" when the key is
 * absent or unusable, `algorithm` is absent or differs from the header's `alg`, the JWS does
 * not verify (or is not canonical base64url), or its payload is not exactly the canonical
 * unsigned mandate; else "valid".
 */
export async function verifyMandate(m: Mandate): Promise<SignatureState> {
  try {
    if (m.signature === undefined) return "missing";
    const { header } = await verifySignedRecord(m.signature, m.principal.public_key, { typ: MANDATE_TYP, record: unsignedPart(m) });
    return header.alg === m.algorithm ? "valid" : "invalid";
  } catch {
    return "invalid";
  }
}
