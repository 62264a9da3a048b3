/**
 * The ledger head of an agreement (table `agreement_ledger_heads`, migrations/0180_ledger_heads.sql):
 * its `ledger_sequence` and `ledger_head` (the last entry's hash), in a narrow row of its own
 * so that a spend does not write a new version of the agreement's row (its signed record
 * included). No row: the ledger is empty (sequence 0, no head). Writers hold the agreement
 * row's lock (FOR NO KEY UPDATE). `moveHead` is the one statement that moves it outside the
 * spend and outcome statements (which move it in the same statement as their insert,
 * ./spend-sql.ts and ./outcome.ts).
 */
import type { HashString } from "../../core/canonical/index.js";
import type { Queryable } from "../pool.js";

/**
 * The head of agreement `agreementId` as committed now. After locking the agreement's row, read
 * the head with THIS (a statement of its own): a statement that locks the row and joins the
 * head reads the head of its snapshot, taken before it waited for the lock (Read Committed
 * re-reads only the locked row), which a concurrent spend may have moved since.
 */
export async function readHead(q: Queryable, agentId: string, agreementId: string): Promise<{ ledger_sequence: number; ledger_head: HashString | null }> {
  const { rows } = await q.query<{ ledger_sequence: number; ledger_head: HashString }>(
    "SELECT ledger_sequence, ledger_head FROM agreement_ledger_heads WHERE agent_id = $1 AND agreement_id = $2",
    [agentId, agreementId],
  );
  return rows[0] ?? { ledger_sequence: 0, ledger_head: null };
}

/** Joins agreement `a`'s head as `h`, in a FROM clause after `agreements a` (for reads that lock nothing; see `readHead`). */
export const HEAD_JOIN = "LEFT JOIN agreement_ledger_heads h ON h.agent_id = a.agent_id AND h.agreement_id = a.agreement_id";

/** The head's columns `ledger_sequence` (0 when empty) and `ledger_head` (null when empty), with HEAD_JOIN. */
export const HEAD_COLUMNS = "coalesce(h.ledger_sequence, 0) AS ledger_sequence, h.ledger_head";

/**
 * The statement that moves heads (an upsert): `rows` is a VALUES list or a SELECT of
 * (agreement_id, ledger_sequence, ledger_head) rows.
 */
export function moveHeadSql(rows: string): string {
  return `INSERT INTO agreement_ledger_heads (agent_id, agreement_id, ledger_sequence, ledger_head) ${rows}
  ON CONFLICT ON CONSTRAINT agreement_ledger_heads_pkey DO UPDATE SET ledger_sequence = EXCLUDED.ledger_sequence, ledger_head = EXCLUDED.ledger_head, updated_at = EXCLUDED.updated_at`;
}

const MOVE_HEAD_SQL = moveHeadSql("VALUES ($1::text, $2::text, $3::int, $4::text)");

/** Moves `agreementId`'s head to entry `sequence` (>= 1), hash `head` (the caller holds the agreement row's lock). */
export async function moveHead(q: Queryable, agentId: string, agreementId: string, sequence: number, head: HashString): Promise<void> {
  await q.query(MOVE_HEAD_SQL, [agentId, agreementId, sequence, head]);
}
