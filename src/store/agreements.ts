/**
 * Stored intent agreements (table `agreements`, migrations/0060_agreements.sql): upsert and
 * revocation. Reads are in ./agreements-read.ts.
 *
 * Promises:
 * - The record is stored schema-checked and WITHOUT its ledger fields (`ledger`,
 *   `ledger_sequence`, `ledger_head`, `ledger_as_of`): the ledger lives in `ledger_entries` and
 *   its head in `agreement_ledger_heads` (./ledger/head.ts). `revision` increases only when the stored record
 *   or its columns change, never on a ledger append, so it is the key of prepared records.
 * - The service is the system of record for ledgers: a ledger that arrives WITH a record (a
 *   manifest, a Delegation's embedded agreement) must verify (`verifyLedger`, else
 *   LEDGER_INVALID), and is written only when the record creates the agreement: then it is
 *   the imported history, counted at face value, its action_ids spent (./ledger/import.ts).
 *   For an agreement already stored it never adds, changes or releases an entry; when it is
 *   not a prefix of the stored ledger, `ledgerIgnored` says so (the caller reports it).
 * - An acknowledgement that names a registry organization (role merchant/psp/issuer, `id` an
 *   org id) is stored only when signed by a live key that organization registered
 *   (./ack-keys.ts): else ACK_KEY_UNREGISTERED, and nothing is stored.
 * - The row and its ledger's are keyed by `(agent_id, agreement_id)`; the id is claimed in
 *   `record_ids` (./record-ids.ts) within the record's organization when first stored (two
 *   organizations may each hold the id), and a stored agreement's agent never changes (a
 *   record naming another agent of the organization: RECORD_INVALID).
 * - Revocation is final: once revoked, an agreement stays revoked whatever record is applied
 *   later. A revocation (by `revokeAgreement`, or a record applied with status `revoked`) is
 *   announced as NOTIFY `{kind: "agreement", org, ids: [id]}` when the transaction commits.
 *
 * Run every function inside a transaction (`withTransaction`): the row lock taken here must
 * hold until the ledger and the totals are written.
 */
import { type AgreementRevocation, type IntentAgreement, type LedgerEntry, verifyLedger } from "../core/agreement/index.js";
import { canonicalJson, type HashString } from "../core/canonical/index.js";
import { validate } from "../core/schemas/index.js";
import { unregisteredClaimsText, unregisteredPartyClaims } from "./ack-keys.js";
import { declaredLedgerIgnored, importLedger } from "./ledger/index.js";
import type { Queryable } from "./pool.js";
import { readHead } from "./ledger/head.js";
import { notifiedHereOnCitus } from "./delegations-citus.js";
import { moveChainSpend } from "./ledger/chain-spend.js";
import { RecordStoreError } from "./record-errors.js";
import { claimRecordId, moveRecordId, recordIdHolder } from "./record-ids.js";
import { announceRevoked, MAX_ID_LENGTH } from "./revocation/announce.js";

/** An agreement as stored: the record without its ledger fields. */
export type AgreementRecord = Omit<IntentAgreement, "ledger" | "ledger_sequence" | "ledger_head" | "ledger_as_of">;

/** Options of `upsertAgreement`. Undefined keeps the stored value (null for a new row). */
export interface UpsertAgreementOptions {
  delegationId?: string | null;
  orgId?: string | null;
  /** The agent; default: the first mandate's agent. */
  agentId?: string;
  /** Time of a revocation this upsert causes (default: now). */
  at?: Date;
  /** Set by the retry after a concurrent store of the same id (internal). */
  claimedBefore?: boolean;
}

/** What `upsertAgreement` did. */
export interface UpsertAgreementResult {
  agreementId: string;
  /** The agent whose row holds it. */
  agentId: string;
  revision: number;
  created: boolean;
  /** The record or its columns changed (revision increased). */
  changed: boolean;
  ledgerSequence: number;
  /** Entries imported from the record's ledger (only when this call created the agreement). */
  ledgerAppended: number;
  /** Why the record's ledger was ignored (it is not a prefix of the stored ledger), when it was. */
  ledgerIgnored?: string;
  /** The stored agreement is revoked (now or before). */
  revoked: boolean;
  /** This call revoked it (its record's status is `revoked` and it was not revoked before): false on a re-apply. */
  revokedNow: boolean;
}

/** Who revoked, why and when; optionally the principal's signed revocation to keep in the record. */
export interface AgreementRevocationActs {
  reason: string;
  by: string;
  at: Date;
  revocation?: AgreementRevocation;
}

interface StoredRow {
  revision: string;
  record: unknown;
  revoked_at: Date | null;
  ledger_sequence: number;
  ledger_head: HashString | null;
  delegation_id: string | null;
  org_id: string | null;
  agent_id: string;
  evidence: string | null;
}

/** Splits an agreement into the stored record and its ledger. */
export function splitAgreement(a: IntentAgreement): { record: AgreementRecord; ledger: LedgerEntry[] } {
  const { ledger, ledger_sequence: _s, ledger_head: _h, ledger_as_of: _a, ...record } = a;
  return { record, ledger: ledger ?? [] };
}

function checked(agreement: IntentAgreement): IntentAgreement {
  const r = validate<IntentAgreement>("intent-agreement", structuredClone(agreement));
  if (!r.ok) throw new RecordStoreError("RECORD_INVALID", `agreement is not valid: ${r.errors.join("; ")}`);
  return r.value;
}

/** The stored row of agreement `id` of agent `agentId` (its key), locked. */
async function lockRow(q: Queryable, agentId: string, id: string): Promise<StoredRow | undefined> {
  const { rows } = await q.query<Omit<StoredRow, "ledger_sequence" | "ledger_head">>(
    `SELECT revision::text AS revision, record, revoked_at, delegation_id, org_id, agent_id, evidence
     FROM agreements WHERE agent_id = $1 AND agreement_id = $2 FOR NO KEY UPDATE`,
    [agentId, id],
  );
  const row = rows[0];
  // The head after the lock, in a statement of its own (see readHead).
  return row ? { ...row, ...(await readHead(q, row.agent_id, id)) } : undefined;
}

function foreignKey(e: unknown, delegationId: string | null): never {
  if ((e as { code?: unknown }).code === "23503") throw new RecordStoreError("DELEGATION_NOT_FOUND", `delegation ${String(delegationId)} is not stored`);
  throw e;
}

/** Stores or updates `agreement` and extends its ledger (see the module comment). */
export async function upsertAgreement(q: Queryable, agreement: IntentAgreement, opts: UpsertAgreementOptions = {}): Promise<UpsertAgreementResult> {
  const full = checked(agreement);
  const { record, ledger } = splitAgreement(full);
  if (ledger.length > 0) {
    const state = verifyLedger(full);
    if (state.state !== "ok")
      throw new RecordStoreError("LEDGER_INVALID", `the agreement's ledger does not verify: ${state.state === "broken" ? state.problem : "unknown"}`);
  }
  const unregistered = await unregisteredPartyClaims(q, full);
  if (unregistered.length > 0) throw new RecordStoreError("ACK_KEY_UNREGISTERED", unregisteredClaimsText(unregistered));
  const id = record.agreement_id;
  if (id.length < 1 || id.length > MAX_ID_LENGTH) throw new RecordStoreError("RECORD_INVALID", `agreement_id must be 1 to ${MAX_ID_LENGTH} characters`);
  const agentId = opts.agentId ?? record.mandates[0]?.agent.agent_id ?? "";
  // The row is read by its key (agent_id, agreement_id); the claim in record_ids says whether another agent holds the id.
  let stored = await lockRow(q, agentId, id);
  if (stored?.evidence != null) {
    throw new RecordStoreError(
      "RECORD_INVALID",
      `agreement ${id} holds the ledger of a recorded payment mandate; it cannot be replaced by a declared agreement`,
    );
  }
  const selfRevokes = record.status === "revoked" && stored?.revoked_at == null;
  const delegationId = opts.delegationId !== undefined ? opts.delegationId : (stored?.delegation_id ?? null);
  const orgId = opts.orgId !== undefined ? opts.orgId : (stored?.org_id ?? null);
  const revokedAt = opts.at ?? new Date();
  const reason = record.revocation?.reason ?? "the record's status is revoked";
  if (stored?.revoked_at != null) {
    record.status = "revoked";
    const kept = (stored.record as AgreementRecord).revocation;
    if (record.revocation === undefined && kept !== undefined) record.revocation = kept;
  }

  let created = false;
  let changed = false;
  let revision: number;
  let appended = 0;
  if (!stored) {
    // Claimed first (migrations/0322_record_claims.sql): one inserted concurrently is waited for, then updated like any stored row.
    if (!(await claimRecordId(q, "agreement", id, orgId, agentId))) {
      const holder = await recordIdHolder(q, "agreement", orgId, id);
      if (holder !== undefined && holder !== agentId) {
        // The agent is the first column of every key of the agreement's rows and its ledger's (docs/scale.md, "Keys").
        throw new RecordStoreError(
          "RECORD_INVALID",
          `agreement ${id} is stored for agent ${holder}; a stored agreement's agent never changes (declare one for ${agentId} under another id)`,
        );
      }
      if (opts.claimedBefore) throw new RecordStoreError("RECORD_INVALID", `agreement ${id} is claimed but not stored`);
      return upsertAgreement(q, agreement, { ...opts, claimedBefore: true });
    }
    const values = [id, delegationId, agentId, orgId, record.status, JSON.stringify(record), selfRevokes ? revokedAt : null, selfRevokes ? reason : null];
    const insert = async () => {
      const ins = await q
        .query<{ revision: string }>(
          `INSERT INTO agreements (agreement_id, delegation_id, agent_id, org_id, status, record, revoked_at, revoked_reason, revoked_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $7::timestamptz IS NULL THEN NULL ELSE 'record' END)
           RETURNING revision::text AS revision`,
          values,
        )
        .catch((e: unknown) => foreignKey(e, delegationId));
      // The service's ledger: a declared one is imported only into an agreement this call creates.
      appended = await importLedger(q, agentId, full, ledger);
      return ins;
    };
    // On a Citus cluster an import's statements (its rows' and totals' INSERT … SELECT, its
    // chain's running totals) can make the transaction commit in two phases, which a worker's
    // NOTIFY makes fail: the row's change notice comes from this session then
    // (./delegations-citus.ts).
    const ins = await notifiedHereOnCitus(q, ledger.length > 0, agentId, insert);
    created = changed = true;
    const inserted = ins.rows[0]?.revision ?? "1";
    revision = Number(inserted);
    stored = {
      revision: inserted,
      record,
      revoked_at: null,
      ledger_sequence: 0,
      ledger_head: null,
      delegation_id: delegationId,
      org_id: orgId,
      agent_id: agentId,
      evidence: null,
    };
  } else {
    revision = Number(stored.revision);
    changed =
      canonicalJson(stored.record) !== canonicalJson(record) || stored.delegation_id !== delegationId || stored.org_id !== orgId || stored.agent_id !== agentId;
    if (changed) {
      if (stored.org_id !== orgId && !(await moveRecordId(q, "agreement", id, stored.org_id, orgId, agentId))) {
        throw new RecordStoreError("RECORD_INVALID", `agreement ${id} is held by another agent of organization ${String(orgId)}`);
      }
      // Bound to another delegation: its totals leave the old chain's running totals and join the new one's (./ledger/chain-spend.ts).
      const moved = stored.delegation_id !== delegationId;
      const write = async () => {
        if (moved) await moveChainSpend(q, agentId, { agreementId: id }, -1);
        const upd = await q
          .query<{ revision: string }>(
            `UPDATE agreements SET delegation_id = $2, org_id = $4, status = $5, record = $6,
             revoked_at = coalesce(revoked_at, $7), revoked_reason = coalesce(revoked_reason, $8),
             revoked_by = coalesce(revoked_by, CASE WHEN $7::timestamptz IS NULL THEN NULL ELSE 'record' END),
             revision = revision + 1, updated_at = now()
           WHERE agent_id = $3 AND agreement_id = $1 RETURNING revision::text AS revision`,
            [id, delegationId, agentId, orgId, record.status, JSON.stringify(record), selfRevokes ? revokedAt : null, selfRevokes ? reason : null],
          )
          .catch((e: unknown) => foreignKey(e, delegationId));
        if (moved) await moveChainSpend(q, agentId, { agreementId: id }, 1);
        return upd;
      };
      // On a Citus cluster a move writes the ancestors' running totals on their own workers, a
      // two-phase commit that Postgres refuses to PREPARE after a NOTIFY: the row's change
      // notice then comes from this session (./delegations-citus.ts).
      const upd = await notifiedHereOnCitus(q, moved, agentId, write);
      revision = Number(upd.rows[0]?.revision ?? revision + 1);
    }
  }
  const ignored = created
    ? undefined
    : await declaredLedgerIgnored(q, stored.agent_id, id, { sequence: stored.ledger_sequence, head: stored.ledger_head }, ledger);
  if (selfRevokes) await announceRevoked(q, "agreement", [id], orgId ?? "");
  return {
    agreementId: id,
    agentId,
    revision,
    created,
    changed,
    ledgerSequence: created ? appended : stored.ledger_sequence,
    ledgerAppended: appended,
    ...(ignored !== undefined ? { ledgerIgnored: ignored } : {}),
    revoked: selfRevokes || stored.revoked_at != null,
    revokedNow: selfRevokes,
  };
}

/**
 * Revokes agreement `id` (status `revoked`, the acts recorded, `revision` bumped, the signed
 * revocation kept in the record when given) and announces it with NOTIFY. `found` is false for
 * an unknown id; `ids` is empty when it was already revoked.
 */
export async function revokeAgreement(q: Queryable, agentId: string, id: string, acts: AgreementRevocationActs): Promise<{ ids: string[]; found: boolean }> {
  const { rows } = await q.query<{ agreement_id: string; org_id: string | null; newly: boolean }>(
    `WITH upd AS (
       UPDATE agreements SET status = 'revoked', revoked_at = $2, revoked_reason = $3, revoked_by = $4,
         record = jsonb_set(record, '{status}', '"revoked"') || CASE WHEN $5::jsonb IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('revocation', $5::jsonb) END,
         revision = revision + 1, updated_at = now()
       WHERE agent_id = $6 AND agreement_id = $1 AND revoked_at IS NULL
       RETURNING agreement_id, org_id
     )
     SELECT agreement_id, org_id, true AS newly FROM upd
     UNION ALL SELECT agreement_id, org_id, false FROM agreements WHERE agent_id = $6 AND agreement_id = $1 AND NOT EXISTS (SELECT 1 FROM upd)`,
    [id, acts.at, acts.reason, acts.by, acts.revocation === undefined ? null : JSON.stringify(acts.revocation), agentId],
  );
  const row = rows[0];
  if (!row) return { ids: [], found: false };
  if (!row.newly) return { ids: [], found: true };
  await announceRevoked(q, "agreement", [id], row.org_id ?? "");
  return { ids: [id], found: true };
}
