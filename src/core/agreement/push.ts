/**
 * Revocation pushes (`POST /v1/revocations/push`): a notifier relays a principal's signed
 * agreement revocation as `{at, svc_revocation_push: "1", revocation, signature}`.
 *
 * Two signatures, both signed records (../jose/signed-record.ts):
 * - outer: by the notifier key (SVC_PUSH_NOTIFIER_JWK), protected `typ`
 *   `svc-revocation-push+jws`, over JCS(body without `signature`): it says who relayed it;
 * - inner (`revocation.signature`): by the principal who signed the agreement's mandates,
 *   `typ` `svc-revocation+jws`, over JCS(revocation without `signature`): it says the principal
 *   revoked. It is checked against the STORED agreement by `verifyRevocation` (./revocation.ts):
 *   the principal key every live mandate names, and every live mandate hash covered.
 */
import { signRecord, unsignedPart, verifySignedRecord, type Signer } from "../jose/index.js";
import type { AgreementRevocation } from "./types.js";

/** The protected-header typ of a revocation push (the outer signature). */
export const PUSH_TYP = "svc-revocation-push+jws";

/** Signs the push body around `revocation` with the notifier key. */
export async function signRevocationPush(revocation: AgreementRevocation, at: string, notifier: Signer): Promise<Record<string, unknown>> {
  const body = { at, svc_revocation_push: "1", revocation };
  return { ...body, signature: await signRecord(body, notifier, PUSH_TYP) };
}

/**
 * Verifies the notifier's signature over a push body (parsed JSON) with `notifierKey`. Throws
 * JoseError (see `verifySignedRecord`); says nothing about the inner revocation.
 */
export async function verifyRevocationPush(body: Record<string, unknown>, notifierKey: unknown): Promise<void> {
  await verifySignedRecord(body.signature, notifierKey, { typ: PUSH_TYP, record: unsignedPart(body) });
}
