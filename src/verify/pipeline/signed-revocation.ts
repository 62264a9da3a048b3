/**
 * A principal's signed revocation of a delegation (the body of `DELETE /svc/delegations/{id}`
 * without a bearer, docs/verify.md):
 *
 *   {"revocation": <flattened JWS>}
 *
 * The JWS is signed by the key the delegation names as `principal.public_key`, with protected
 * `typ` `svc-delegation-revocation+jws`; its payload is the RFC 8785 canonical JSON of
 * `{svc_delegation_revocation: 1, delegation_id, at, reason}`. It verifies only for the
 * delegation it names. Revocation is final and idempotent, so a replayed revocation changes
 * nothing. Pure apart from signature checks; never throws from `verifyDelegationRevocation`.
 */
import { canonicalBytes } from "../../core/canonical/index.js";
import { parsePublicJwk, signJws, verifyJws, type JwsObject, type Signer } from "../../core/jose/index.js";
import { parseInstant } from "../../core/time/index.js";

/** The protected-header typ of a signed delegation revocation. */
export const DELEGATION_REVOCATION_TYP = "svc-delegation-revocation+jws";
/** Longest reason accepted (characters). */
export const MAX_REASON_LENGTH = 500;

/** What a principal signs. */
export interface DelegationRevocationPayload {
  svc_delegation_revocation: 1;
  delegation_id: string;
  at: string;
  reason: string;
}

/** Signs a revocation of `delegationId` with the principal's `signer`. */
export function signDelegationRevocation(fields: { delegation_id: string; at: string; reason: string }, signer: Signer): Promise<JwsObject> {
  const payload: DelegationRevocationPayload = { svc_delegation_revocation: 1, delegation_id: fields.delegation_id, at: fields.at, reason: fields.reason };
  return signJws(canonicalBytes(payload), signer, DELEGATION_REVOCATION_TYP);
}

/**
 * The verified payload of `jws` for delegation `delegationId` whose principal key is
 * `principalKey`, or a short reason why it does not verify.
 */
export async function verifyDelegationRevocation(
  jws: unknown,
  delegationId: string,
  principalKey: unknown,
): Promise<{ ok: true; payload: DelegationRevocationPayload } | { ok: false; problem: string }> {
  if (principalKey === undefined) return { ok: false, problem: "the delegation names no principal public_key" };
  let text: string;
  try {
    const v = await verifyJws(jws, parsePublicJwk(principalKey), { typ: DELEGATION_REVOCATION_TYP });
    text = v.payload.toString("utf8");
  } catch {
    return { ok: false, problem: "the signature does not verify with the delegation principal's key" };
  }
  let p: Partial<DelegationRevocationPayload>;
  try {
    p = JSON.parse(text) as Partial<DelegationRevocationPayload>;
  } catch {
    return { ok: false, problem: "the signed payload is not JSON" };
  }
  if (typeof p !== "object" || p === null || p.svc_delegation_revocation !== 1) return { ok: false, problem: "the payload is not a delegation revocation" };
  if (p.delegation_id !== delegationId) return { ok: false, problem: "the revocation names another delegation" };
  if (parseInstant(p.at) === undefined) return { ok: false, problem: "the revocation's at is not an RFC 3339 date-time" };
  if (typeof p.reason !== "string" || p.reason.length > MAX_REASON_LENGTH || p.reason.includes("\u0000")) {
    return { ok: false, problem: `the revocation's reason must be a string of at most ${MAX_REASON_LENGTH} characters` };
  }
  return { ok: true, payload: p as DelegationRevocationPayload };
}
