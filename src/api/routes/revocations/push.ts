/**
 * Verification and parsing of a revocation push (`POST /v1/revocations/push`).
 *
 * Payload binding rule: the outer `signature` is a flattened JWS by the notifier key
 * (SVC_PUSH_NOTIFIER_JWK) whose protected header has `typ: "svc-revocation-push+jws"` and whose
 * payload is EXACTLY the RFC 8785 canonical JSON (UTF-8) of the request body with the
 * `signature` member removed (src/core/agreement/push.ts). Every other member of the body is
 * therefore signed; changing any of them, or sending a payload that differs from the body,
 * fails verification.
 *
 * Order: verify first (anything not signed by the notifier is a 401, whatever its shape), then
 * check the shape of the signed body (a signed but malformed body is a 400 naming the field),
 * then the principal's own signature against the stored agreement (./index.ts).
 */
import { verifyRevocationPush, type AgreementRevocation } from "../../../core/agreement/index.js";
import { parseInstant } from "../../../core/time/index.js";
import { isHashString } from "../../../core/canonical/index.js";
import { parseJwsObject, withLowSSignature, type PublicJwk } from "../../../core/jose/index.js";
import { ApiError } from "../../errors.js";

/** Longest accepted agreement id and reason (characters). */
const MAX_ID = 256;
const MAX_REASON = 4096;
const MAX_MANDATE_HASHES = 256;

/** A verified, well-formed push. */
export interface VerifiedPush {
  at: string;
  revocation: AgreementRevocation;
}

/** Verifies the notifier signature over the body; throws the 401 PUSH_NOT_VERIFIED otherwise. */
export async function verifyPushSignature(body: Record<string, unknown>, notifierKey: PublicJwk): Promise<void> {
  try {
    await verifyRevocationPush(body, notifierKey);
  } catch {
    throw new ApiError("PUSH_NOT_VERIFIED");
  }
}

function invalid(field: string, rule: string): ApiError {
  return new ApiError("VALIDATION_FAILED", `body/${field} ${rule}`);
}

function boundedString(v: unknown, field: string, max: number): string {
  if (typeof v !== "string" || v.length === 0) throw invalid(field, "must be a non-empty string");
  if (v.length > max) throw invalid(field, `must be at most ${max} characters`);
  return v;
}

function dateTime(v: unknown, field: string): string {
  if (parseInstant(v) === undefined) throw invalid(field, "must be an RFC 3339 date-time");
  return v as string;
}

function parseRevocation(v: unknown): AgreementRevocation {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw invalid("revocation", "must be an object");
  const r = v as Record<string, unknown>;
  if (r.svc_revocation !== 1) throw invalid("revocation/svc_revocation", "must be 1");
  boundedString(r.agreement_id, "revocation/agreement_id", MAX_ID);
  if (!isHashString(r.mandate_hash)) throw invalid("revocation/mandate_hash", "must be a sha256: hash string");
  dateTime(r.at, "revocation/at");
  boundedString(r.reason, "revocation/reason", MAX_REASON);
  try {
    parseJwsObject(r.signature);
  } catch {
    throw invalid("revocation/signature", "must be a JWS object {protected, payload, signature}");
  }
  if (r.mandate_hashes !== undefined) {
    const hs = r.mandate_hashes;
    if (!Array.isArray(hs) || hs.length < 1 || hs.length > MAX_MANDATE_HASHES || !hs.every(isHashString)) {
      throw invalid("revocation/mandate_hashes", `must be 1 to ${MAX_MANDATE_HASHES} sha256: hash strings`);
    }
  }
  return r as unknown as AgreementRevocation;
}

/** Checks the shape of a verified push body; throws a 400 naming the first bad field. */
export function parsePushBody(body: Record<string, unknown>): VerifiedPush {
  // The version marker is the string "1" in the spec's request; the number 1 is accepted too.
  if (body.svc_revocation_push !== "1" && body.svc_revocation_push !== 1) {
    throw invalid("svc_revocation_push", 'must be "1"');
  }
  // The principal's signature in its low-S form: the revocation id (its hash) and the stored
  // revocation are the same for both S halves of one ES256 signature (docs/threat-model/signatures.md).
  return { at: dateTime(body.at, "at"), revocation: withLowSSignature(parseRevocation(body.revocation)) };
}
