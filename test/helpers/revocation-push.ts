/**
 * Builders of revocation pushes for tests: a principal-signed revocation object and the
 * notifier-signed push body around it (outer JWS payload = canonical JSON of the body without
 * `signature`, typ `svc-revocation-push+jws`).
 *
 * The service stores a pushed revocation only when it verifies against an agreement it holds
 * (docs/verify.md, "Revocation pushes"): `storedRevocation` stores such an agreement first;
 * `makeRevocation` names an agreement nobody stored (for refusals that come before that check).
 */
import { randomBytes } from "node:crypto";
import type { Pool } from "pg";
import { buildSignedAgreement, PUSH_TYP, signRevocation, type IntentAgreement, type Mandate } from "../../src/core/agreement/index.js";
import { canonicalBytes, hashOf } from "../../src/core/canonical/index.js";
import { generateSigner, signJws, type Signer } from "../../src/core/jose/index.js";
import type { AgreementRevocation } from "../../src/core/agreement/types.js";
import { upsertAgreement } from "../../src/store/agreements.js";

export { PUSH_TYP };

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

/** A signed agreement of `intents` mandates by `principal` (default a throwaway Ed25519 key), stored in `pool`. */
export async function storeSignedAgreement(
  pool: Pool,
  intents = 1,
  principal: Signer = generateSigner(),
): Promise<{ agreement: IntentAgreement; principal: Signer }> {
  const id = `agr_${randomBytes(6).toString("hex")}`;
  const mandates: Mandate[] = Array.from({ length: intents }, (_, i) => ({
    intent_id: `i${i + 1}`,
    principal: { type: "human", id: "prn_push" },
    agent: { agent_id: `agent_${id}` },
    currency: "EUR",
    maximum_amount: 10,
    expires_at: "2027-01-01T00:00:00Z",
  }));
  const agreement = await buildSignedAgreement({ agreement_id: id, mandates, at: "2026-01-01T00:00:00Z" }, principal);
  await upsertAgreement(pool, agreement);
  return { agreement, principal };
}

/** A valid principal revocation of an agreement stored in `pool` (see the module comment). */
export async function storedRevocation(pool: Pool, over: { reason?: string; at?: string } = {}): Promise<AgreementRevocation> {
  const { agreement, principal } = await storeSignedAgreement(pool);
  return signRevocation(agreement, { reason: over.reason ?? "principal revoked", at: over.at ?? "2026-01-02T03:04:05Z" }, principal);
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
