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
import { hasNul } from "../canonical/index.js";
import { generateSigner, inspectSignedRecord, signRecord, verifySignedRecord, type JwsObject, type Signer } from "../jose/index.js";
import { parseInstant } from "../time/index.js";

/** The protected-header typ of a signed delegation revocation. */
export const DELEGATION_REVOCATION_TYP = "svc-delegation-revocation+jws";
/** Longest reason accepted (characters). */
export const MAX_REASON_LENGTH = 500;
/**
 * The one problem for every failure that depends on the delegation: an unknown id, a
 * delegation without a principal key, a signature by another key. The same words for all, so
 * an unauthenticated caller learns nothing about which delegations exist.
 */
export const KEY_PROBLEM = "the signature does not verify with the delegation principal's key";

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
  return signRecord(payload, signer, DELEGATION_REVOCATION_TYP);
}

/** Why a verified-shape payload is not a revocation of `delegationId`, or undefined. */
function payloadProblem(p: Record<string, unknown>, delegationId: string): string | undefined {
  if (p.svc_delegation_revocation !== 1) return "the payload is not a delegation revocation";
  if (p.delegation_id !== delegationId) return "the revocation names another delegation";
  if (parseInstant(p.at) === undefined) return "the revocation's at is not an RFC 3339 date-time";
  if (typeof p.reason !== "string" || p.reason.length > MAX_REASON_LENGTH || hasNul(p.reason)) {
    return `the revocation's reason must be a string of at most ${MAX_REASON_LENGTH} characters`;
  }
  return undefined;
}

/** A key nobody holds: what an unknown delegation's revocation is checked against (same work, same answer). */
const DECOY_KEY = generateSigner().publicJwk;

/**
 * The verified payload of `jws` for delegation `delegationId` whose principal key is
 * `principalKey` (undefined for an unknown delegation, or one that names no key), or a short
 * reason why it does not verify. The token's own problems (shape, alg, typ, a payload that is
 * not canonical JSON, another delegation's id) are named whether or not the delegation exists;
 * every problem that depends on the delegation is KEY_PROBLEM.
 */
export async function verifyDelegationRevocation(
  jws: unknown,
  delegationId: string,
  principalKey: unknown,
): Promise<{ ok: true; payload: DelegationRevocationPayload } | { ok: false; problem: string }> {
  const check = { typ: DELEGATION_REVOCATION_TYP };
  let payload: Record<string, unknown>;
  try {
    payload = inspectSignedRecord(jws, check).payload;
  } catch (e) {
    return { ok: false, problem: e instanceof Error ? e.message : String(e) };
  }
  const problem = payloadProblem(payload, delegationId);
  if (problem !== undefined) return { ok: false, problem };
  try {
    await verifySignedRecord(jws, principalKey ?? DECOY_KEY, check);
  } catch {
    return { ok: false, problem: KEY_PROBLEM };
  }
  if (principalKey === undefined) return { ok: false, problem: KEY_PROBLEM };
  return { ok: true, payload: payload as unknown as DelegationRevocationPayload };
}
