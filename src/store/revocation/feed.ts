/**
 * The revocation feed's storage: principal revocations received over the push webhook, each
 * with a gapless `sequence` (1, 2, 3, ... in commit order) and `revocation_id =
 * hashOf(revocation)`.
 *
 * Promise: `recordRevocation` checks a new revocation with the caller's `check` (which reads
 * the stored agreement in the same transaction, docs/verify.md "Revocation pushes", and names
 * its agent and organization), stores it with them, appends it to the transparency log and announces it with NOTIFY on `writ_revocations`,
 * all in ONE transaction; a revocation whose id is already stored changes nothing, and one the
 * check refuses (it throws) stores nothing. Sequences are assigned under a transaction-level advisory
 * lock, so they become visible in order and a follower resuming with `after=<sequence>` never
 * skips a row that commits later.
 */
import type { Pool } from "pg";
import type { AgreementRevocation } from "../../core/agreement/index.js";
import type { HashString } from "../../core/canonical/index.js";
import { LOCK_IDS, WRIT_LOCK_NAMESPACE, XACT_LOCK_SQL } from "../locks.js";
import { notifyRevocation } from "../notify.js";
import { withTransaction, type Queryable } from "../pool.js";
import type { PoolClient } from "pg";

/** A revocation as the pull list returns it. */
export interface StoredRevocation {
  sequence: number;
  revocation_id: HashString;
  /** When this service stored it (RFC 3339, UTC). */
  received_at: string;
  revocation: AgreementRevocation;
}

/** What to store: the revocation object, its id, and the push's own `at`. */
export interface RevocationInput {
  revocation: AgreementRevocation;
  revocationId: HashString;
  pushedAt: string;
}

/** The outcome of `recordRevocation`. */
export type RecordOutcome = { stored: true; revocation_id: HashString; sequence: number } | { stored: false; revocation_id: HashString; sequence: number };

/** Work done in the storing transaction after the row is inserted (the log append). */
export type AfterInsert = (client: PoolClient, stored: StoredRevocation) => Promise<void>;

/** The stored agreement a pushed revocation names: its agent and organization. */
export interface RevokedAgreementOwner {
  agentId: string;
  orgId: string | null;
}

/**
 * Checks a new revocation in the storing transaction before it is inserted; throws to refuse
 * it. Answers the agreement it names (stored with the revocation: an id names an agreement
 * within one organization).
 */
export type BeforeInsert = (client: PoolClient) => Promise<RevokedAgreementOwner>;

/** Largest page of the pull list. */
export const MAX_PAGE = 1000;

interface Row {
  sequence: string;
  revocation_id: string;
  received_at: Date;
  revocation: AgreementRevocation;
}

function toStored(r: Row): StoredRevocation {
  return {
    sequence: Number(r.sequence),
    revocation_id: r.revocation_id as HashString,
    received_at: r.received_at.toISOString(),
    revocation: r.revocation,
  };
}

/** Stores, logs and announces one revocation (see the module comment). */
export async function recordRevocation(pool: Pool, input: RevocationInput, check: BeforeInsert, afterInsert: AfterInsert): Promise<RecordOutcome> {
  return withTransaction(pool, async (client) => {
    await client.query(XACT_LOCK_SQL, [WRIT_LOCK_NAMESPACE, LOCK_IDS.revocations]);
    const existing = await client.query<{ sequence: string }>("SELECT sequence FROM revocations WHERE revocation_id = $1", [input.revocationId]);
    const prior = existing.rows[0];
    if (prior) return { stored: false, revocation_id: input.revocationId, sequence: Number(prior.sequence) };
    const owner = await check(client);
    // The next sequence, read under the lock above, then the row: a Citus cluster (where
    // revocations is a reference table) refuses an INSERT … SELECT of a table's own maximum.
    const next = await client.query<{ n: string }>("SELECT (coalesce(max(sequence), 0) + 1)::text AS n FROM revocations");
    const { rows } = await client.query<Row>(
      `INSERT INTO revocations (sequence, revocation_id, agreement_id, mandate_hash, revocation, pushed_at, agent_id, org_id)
       VALUES ($8, $1, $2, $3, $4, $5, $6, $7)
       RETURNING sequence, revocation_id, received_at, revocation`,
      [
        input.revocationId,
        input.revocation.agreement_id,
        input.revocation.mandate_hash,
        input.revocation,
        input.pushedAt,
        owner.agentId,
        owner.orgId,
        next.rows[0]?.n ?? "1",
      ],
    );
    const stored = toStored(rows[0] as Row);
    await afterInsert(client, stored);
    await notifyRevocation(client, {
      sequence: stored.sequence,
      revocation_id: stored.revocation_id,
      agreement_id: input.revocation.agreement_id,
      org_id: owner.orgId ?? "",
      mandate_hash: input.revocation.mandate_hash,
      at: input.revocation.at,
    });
    return { stored: true, revocation_id: stored.revocation_id, sequence: stored.sequence };
  });
}

/** Up to `limit` (capped at MAX_PAGE) revocations with sequence > `after`, in sequence order. */
export async function listRevocations(db: Queryable, after: number, limit: number): Promise<StoredRevocation[]> {
  const n = Math.max(1, Math.min(MAX_PAGE, Math.floor(limit)));
  const { rows } = await db.query<Row>(
    "SELECT sequence, revocation_id, received_at, revocation FROM revocations WHERE sequence > $1 ORDER BY sequence LIMIT $2",
    [after, n],
  );
  return rows.map(toStored);
}
