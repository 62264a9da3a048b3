/**
 * Builders of revocation pushes for tests: a principal-signed revocation object and the
 * notifier-signed push body around it (outer JWS payload = canonical JSON of the body without
 * `signature`, typ `svc-revocation-push+jws`).
 */
import { canonicalBytes, hashOf } from "../../src/core/canonical/index.js";
import { generateSigner, signJws, type Signer } from "../../src/core/jose/index.js";
import type { AgreementRevocation } from "../../src/core/agreement/types.js";

/** The push typ. */
export const PUSH_TYP = "svc-revocation-push+jws";

/** A revocation object signed by a throwaway principal key. */
export async function makeRevocation(over: Partial<AgreementRevocation> = {}): Promise<AgreementRevocation> {
  const principal = generateSigner();
  const unsigned = {
    svc_revocation: 1 as const,
    agreement_id: over.agreement_id ?? `agr_${Math.random().toString(36).slice(2)}`,
    mandate_hash: over.mandate_hash ?? hashOf({ mandate: Math.random() }),
    at: over.at ?? "2026-01-02T03:04:05Z",
    reason: over.reason ?? "principal revoked",
  };
  const signature = await signJws(canonicalBytes(unsigned), principal, "svc-revocation+jws");
  return { ...unsigned, signature, ...over };
}

/** The push body `{at, svc_revocation_push: "1", revocation, signature}` signed by `notifier`. */
export async function signPush(
  revocation: unknown,
  notifier: Signer,
  opts: { typ?: string; at?: string; extra?: Record<string, unknown> } = {},
): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {
    at: opts.at ?? "2026-01-02T03:04:06Z",
    svc_revocation_push: "1",
    revocation,
    ...opts.extra,
  };
  const signature = await signJws(canonicalBytes(body), notifier, opts.typ ?? PUSH_TYP);
  return { ...body, signature };
}
