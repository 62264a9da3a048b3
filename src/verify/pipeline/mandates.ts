/**
 * A presented AP2 payment mandate, checked and recorded: the one path `POST /v1/mandates` and
 * the controller's mandate form of a Delegation share (docs/mandates.md).
 *
 * `checkPresentedMandate` looks up the trusted issuer keys the header's `kid` names
 * (`trustedIssuerKeys`: live keys of active wallet organizations; no network) and runs the
 * pure verification and import (`acceptOpenPaymentMandate`) for the registered agent.
 * `recordAcceptedMandate` stores it in one transaction (`recordMandate`) with one `agreement`
 * log entry `{agreement_id, delegation_id, mandate_hashes: [<mandate hash>], evidence}` when
 * it is new and a log signer is given; the mandate hash is the identity of what the issuer
 * signed (`DecodedMandate.mandateHash`).
 */
import type { Pool } from "pg";
import type { Signer } from "../../core/jose/index.js";
import { acceptOpenPaymentMandate, decodeMandatePresentation, type MandateAcceptance, type MandateRefusal } from "../../core/mandates/index.js";
import {
  type AgentRecord,
  trustedIssuerKeys,
  appendLogEntries,
  type LogAppendOptions,
  recordMandate,
  type RecordedMandate,
  withTransaction,
} from "../../store/index.js";

/** What was presented, for whom, and how the key binding is checked. */
export interface PresentedMandate {
  /** The SD-JWT as received. */
  sdJwt: string;
  agent: Pick<AgentRecord, "agent_id" | "public_key" | "principal_id">;
  audience: string;
  nonce?: string;
  kbMaxAgeMs: number;
  now: Date;
}

/** A mandate that verified and imported. */
export type AcceptedMandate = Extract<MandateAcceptance, { ok: true }>;

/** Verifies and imports a presented mandate (see the module comment). */
export async function checkPresentedMandate(
  pool: Pool,
  p: PresentedMandate,
): Promise<{ ok: true; accepted: AcceptedMandate } | { ok: false; refusals: MandateRefusal[] }> {
  const decoded = await decodeMandatePresentation(p.sdJwt);
  // A presentation that does not decode names no key: the verification reports why.
  const kid = "decoded" in decoded ? decoded.decoded.header.kid : undefined;
  const issuerKeys = typeof kid === "string" && kid.length > 0 && kid.length <= 256 ? await trustedIssuerKeys(pool, kid) : [];
  const a = await acceptOpenPaymentMandate(
    p.sdJwt,
    { issuerKeys, audience: p.audience, ...(p.nonce !== undefined ? { nonce: p.nonce } : {}), now: p.now.getTime(), kbMaxAgeMs: p.kbMaxAgeMs },
    { agentId: p.agent.agent_id, publicKey: p.agent.public_key, principal: { type: "human", id: p.agent.principal_id } },
  );
  return a.ok && a.verification.decoded ? { ok: true, accepted: a } : { ok: false, refusals: a.ok ? [] : a.refusals };
}

/** The text of a refusal: `<CODE>: <why>` for the first code, every message after it. */
export function refusalText(refusals: readonly MandateRefusal[]): string {
  return `mandate refused: ${refusals[0]?.code ?? "SD_JWT_MALFORMED"}: ${refusals.map((r) => r.message).join("; ")}`;
}

/** Records an accepted mandate presented by `orgId` (and logs it when new and `log` is given). */
export async function recordAcceptedMandate(
  pool: Pool,
  a: AcceptedMandate,
  p: Pick<PresentedMandate, "sdJwt" | "now"> & { orgId: string },
  log: { signer: Signer; options: LogAppendOptions } | null,
): Promise<RecordedMandate> {
  const decoded = a.verification.decoded;
  if (!decoded) throw new Error("an accepted mandate carries its decoded presentation");
  return withTransaction(pool, async (c) => {
    const r = await recordMandate(c, {
      delegation: a.delegation,
      orgId: p.orgId,
      issuer: a.verification.issuer,
      mandateHash: decoded.mandateHash,
      issuerJwtHash: decoded.issuerJwtHash,
      sdJwt: p.sdJwt,
      claims: decoded.claims,
      at: p.now,
    });
    if (r.created && log) {
      const body = { agreement_id: r.agreementId, delegation_id: r.delegationId, mandate_hashes: [decoded.mandateHash], evidence: "ap2_open_payment_mandate" };
      await appendLogEntries(c, [{ kind: "agreement", body }], log.signer, log.options);
    }
    return r;
  });
}
