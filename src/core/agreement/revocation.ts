/**
 * Agreement revocation: a signed act by the principal who signed the mandates.
 *
 * Promises: the revocation is signed (protected `typ` `svc-revocation+jws`) over JCS(revocation
 * without `signature`). It counts ("valid") only when every live mandate names the same
 * principal key, the signature verifies with that key, `agreement_id` is this agreement's, and
 * it covers every live mandate hash: `mandate_hash` alone covers a single mandate; with
 * several, `mandate_hashes` must list every one. Verifiers never throw.
 *
 * Order: the token's own problems first, named by their code (`JWS_PAYLOAD_NOT_CANONICAL: JWS
 * payload is not the RFC 8785 canonical form of its JSON`, a malformed JWS, a wrong `typ`), since
 * they need neither key nor agreement; then the agreement's facts (its id, one principal key, the
 * live hashes covered); last the signature with that key over exactly this revocation.
 */
import type { HashString } from "../canonical/index.js";
import { JoseError, inspectSignedRecord, signRecord, signedRecordVerifies, unsignedPart, type Signer } from "../jose/index.js";
import { AgreementError } from "./errors.js";
import { mandateHash } from "./mandate.js";
import { assertSignerIsPrincipal, sharedPrincipalKey } from "./principal.js";
import type { AgreementRevocation, IntentAgreement } from "./types.js";

/** The protected-header `typ` of an agreement revocation signature. */
export const REVOCATION_TYP = "svc-revocation+jws";

/** Result of checking an agreement's revocation. */
export type RevocationState = "none" | "valid" | { state: "invalid"; problem: string };

/**
 * Signs a revocation of every live mandate of `agreement` as its principal. Throws
 * AgreementError (SIGNER_NOT_PRINCIPAL) when a mandate names another principal key.
 */
export async function signRevocation(
  agreement: IntentAgreement,
  fields: { reason: string; at: string },
  principalSigner: Signer,
): Promise<AgreementRevocation> {
  assertSignerIsPrincipal(agreement.mandates, principalSigner);
  const hashes = agreement.mandates.map(mandateHash);
  const first = hashes[0];
  if (first === undefined) throw new AgreementError("INTENT_NOT_FOUND", "the agreement holds no mandate to revoke");
  const body: Omit<AgreementRevocation, "signature"> = {
    svc_revocation: 1,
    agreement_id: agreement.agreement_id,
    mandate_hash: first,
    at: fields.at,
    reason: fields.reason,
    ...(hashes.length > 1 ? { mandate_hashes: hashes } : {}),
  };
  const signature = await signRecord(body, principalSigner, REVOCATION_TYP);
  return { ...body, signature };
}

function coverageProblem(r: AgreementRevocation, live: readonly HashString[]): string | undefined {
  if (r.mandate_hashes !== undefined) {
    if (!Array.isArray(r.mandate_hashes) || r.mandate_hashes.length === 0) return "mandate_hashes must be a non-empty array";
    const listed = new Set<unknown>(r.mandate_hashes);
    const missing = live.filter((h) => !listed.has(h));
    if (missing.length > 0) return `the revocation does not cover ${missing.length} live mandate hash(es)`;
    if (!live.includes(r.mandate_hash)) return "mandate_hash does not name a live mandate";
    return undefined;
  }
  if (live.length > 1) return "the agreement holds several intents and the revocation carries no mandate_hashes";
  if (r.mandate_hash !== live[0]) return "mandate_hash does not name the live mandate";
  return undefined;
}

/**
 * State of the agreement's revocation: "none" when it carries none; "valid" when it verifies
 * and covers every live mandate; else invalid with the first problem.
 */
export async function verifyRevocation(agreement: Pick<IntentAgreement, "agreement_id" | "mandates" | "revocation">): Promise<RevocationState> {
  const r = agreement.revocation;
  if (r === undefined) return "none";
  const invalid = (problem: string): RevocationState => ({ state: "invalid", problem });
  try {
    if (typeof r !== "object" || r === null || r.svc_revocation !== 1) return invalid("svc_revocation must be 1");
    try {
      inspectSignedRecord(r.signature, { typ: REVOCATION_TYP });
    } catch (e) {
      if (e instanceof JoseError) return invalid(`${e.code}: ${e.message}`);
      throw e;
    }
    if (r.agreement_id !== agreement.agreement_id) return invalid("the revocation names another agreement");
    if (!Array.isArray(agreement.mandates) || agreement.mandates.length === 0) return invalid("the agreement holds no mandate");
    const key = sharedPrincipalKey(agreement.mandates);
    if (typeof key === "string") return invalid(key);
    const coverage = coverageProblem(r, agreement.mandates.map(mandateHash));
    if (coverage !== undefined) return invalid(coverage);
    if (!(await signedRecordVerifies(r.signature, key, { typ: REVOCATION_TYP, record: unsignedPart(r) }))) {
      return invalid("the revocation signature does not verify with the principal key of the mandates");
    }
    return "valid";
  } catch {
    return invalid("the revocation cannot be read");
  }
}
