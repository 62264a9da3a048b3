/**
 * Recorded payment mandates (table `mandates`, migrations/0130_mandates.sql;
 * docs/mandates.md): a verified mandate becomes a delegation, an agreement row that holds its
 * spend ledger (same id, `evidence` set) and the mandate row with the presentation.
 *
 * Promises (run inside a transaction):
 * - Recording is idempotent by the mandate's identity, `mandate_hash` (what the issuer signed,
 *   never the signature's text; migrations/0220_mandate_hash.sql, unique): a mandate recorded
 *   before is answered as it is stored, under the id it was stored with (`created: false`),
 *   never re-granted, and a revoked one stays revoked. Recordings for one agent are serialised
 *   on the agent's row.
 * - The rows are written only here; a declared delegation or agreement cannot replace them
 *   (`upsertDelegation` / `upsertAgreement` refuse their ids).
 */
import type { HashString } from "../core/canonical/index.js";
import type { Delegation } from "../core/delegation/index.js";
import { mandateLedgerRecord, type TrustedIssuerKey } from "../core/mandates/index.js";
import { getAgent } from "./agents.js";
import { upsertDelegation } from "./delegations.js";
import type { Queryable } from "./pool.js";
import { claimMandateHashes, claimRecordId } from "./record-ids.js";
import { RecordStoreError } from "./record-errors.js";

/** What to record. */
export interface MandateRecordInput {
  /** The delegation the verified mandate became (`acceptOpenPaymentMandate`). */
  delegation: Delegation;
  /** The organization that presented it: the agent's operator. */
  orgId: string;
  issuer: TrustedIssuerKey;
  /** The mandate's identity (`DecodedMandate.mandateHash`). */
  mandateHash: HashString;
  /** The hash of the issuer JWT as presented (recorded, not an identity). */
  issuerJwtHash: HashString;
  /** The presentation as received. */
  sdJwt: string;
  /** The disclosed claims. */
  claims: Record<string, unknown>;
  at: Date;
}

/** What `recordMandate` answers. */
export interface RecordedMandate {
  delegationId: string;
  /** The agreement row holding the ledger (the same id). */
  agreementId: string;
  /** False when the mandate was recorded before. */
  created: boolean;
  revoked: boolean;
  expiresAt: string;
}

/** Records a verified mandate (see the module promises). Throws RecordStoreError. */
export async function recordMandate(q: Queryable, input: MandateRecordInput): Promise<RecordedMandate> {
  const d = input.delegation;
  const id = d.delegation_id;
  if (!(await getAgent(q, d.agent.agent_id, { forUpdate: true }))) throw new RecordStoreError("RECORD_INVALID", `agent ${d.agent.agent_id} is not registered`);
  const recorded = async (): Promise<RecordedMandate | undefined> => {
    const before = await q.query<{ delegation_id: string; agreement_id: string; record: Delegation; revoked: boolean }>(
      `SELECT m.delegation_id, m.agreement_id, d.record, d.revoked_at IS NOT NULL AS revoked
         FROM mandates m JOIN delegations d ON d.agent_id = m.agent_id AND d.delegation_id = m.delegation_id WHERE m.mandate_hash = $1 OR (m.agent_id = $3 AND m.delegation_id = $2)
        ORDER BY m.mandate_hash IS NOT DISTINCT FROM $1 DESC LIMIT 1`,
      [input.mandateHash, id, d.agent.agent_id],
    );
    const known = before.rows[0];
    return known
      ? { delegationId: known.delegation_id, agreementId: known.agreement_id, created: false, revoked: known.revoked, expiresAt: known.record.expires_at }
      : undefined;
  };
  const known = await recorded();
  if (known) return known;
  // Its identities, claimed first: a concurrent recording of the same mandate (by any agent) is waited for, then answered.
  if (!(await claimMandateHashes(q, { mandate: input.mandateHash, issuerJwt: input.issuerJwtHash }, d.agent.agent_id, id))) {
    const now = await recorded();
    if (now) return now;
    throw new RecordStoreError("RECORD_INVALID", `mandate ${input.mandateHash} is recorded under another delegation`);
  }
  if (!(await claimRecordId(q, "agreement", id, input.orgId, d.agent.agent_id))) {
    throw new RecordStoreError("RECORD_INVALID", `agreement ${id} is stored; a payment mandate cannot replace it`);
  }
  const stored = await upsertDelegation(q, d, { orgId: input.orgId, at: input.at, recordsMandate: true });
  await q.query(
    `INSERT INTO agreements (agreement_id, delegation_id, agent_id, org_id, status, record, evidence)
     VALUES ($1, $1, $2, $3, 'active', $4, 'ap2_open_payment_mandate')`,
    [id, d.agent.agent_id, input.orgId, JSON.stringify(mandateLedgerRecord(d, input.at.toISOString()))],
  );
  await q.query(
    `INSERT INTO mandates (delegation_id, agreement_id, agent_id, org_id, issuer_kid, issuer_org_id, mandate_hash, issuer_jwt_hash, sd_jwt, claims, recorded_at)
     VALUES ($1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      id,
      d.agent.agent_id,
      input.orgId,
      input.issuer.kid,
      input.issuer.orgId,
      input.mandateHash,
      input.issuerJwtHash,
      input.sdJwt,
      JSON.stringify(input.claims),
      input.at,
    ],
  );
  return { delegationId: id, agreementId: id, created: true, revoked: stored.revoked, expiresAt: d.expires_at };
}
