/**
 * Appending to the transparency log (tables in migrations/0020_log.sql).
 *
 * Promise: one writer at a time. `appendLogEntries` takes the transaction-level advisory lock
 * `LOCK_IDS.transparencyLog` on the caller's transaction, reads the latest head (size,
 * frontier, last entry hash), builds the entries with consecutive sequences and hash links,
 * extends the Merkle tree from the frontier (never reading an old node) and writes the
 * entries, every full-subtree node they complete and the newly signed head in ONE statement.
 * A head therefore exists for exactly each committed append, and each head extends the one
 * before it: the log cannot sign two inconsistent heads. Were the lock bypassed, the primary
 * keys on sequence, node and tree size make the second writer fail instead of forking the log.
 *
 * The caller's transaction must be READ COMMITTED (Postgres' default) so that the head read
 * after the lock sees the previous writer's commit. Round trips per append: two, the lock with
 * the head read (two statements of one simple query) and the write; `appendToLog` sends BEGIN
 * with the first and adds COMMIT.
 */
import type { ClientBase, Pool, QueryResult } from "pg";
import { canonicalJson, hashBytes, hashFromBytes, type HashString } from "../core/canonical/index.js";
import type { Signer } from "../core/jose/index.js";
import {
  appendLeaves,
  buildLogEntry,
  LogEntryError,
  logLeafHash,
  signCheckpoint,
  signTreeHead,
  type LogEntry,
  type LogKind,
  type TreeHead,
} from "../core/tlog/index.js";
import { LOCK_IDS, WRIT_LOCK_NAMESPACE } from "./locks.js";
import { withTransaction, type Queryable } from "./pool.js";

/** One entry to append: the spec's `{kind, body}`. */
export interface LogAppendInput {
  kind: LogKind;
  body: Record<string, unknown>;
}

/** Options of an append. */
export interface LogAppendOptions {
  /** Checkpoint origin (key name); without it the head is stored without a checkpoint. */
  origin?: string;
  /** Time written into the signed head (default: now). */
  now?: Date;
}

/** What an append wrote: the new entries in order, the signed head and its checkpoint. */
export interface LogAppendResult {
  entries: LogEntry[];
  head: TreeHead;
  checkpoint: string | null;
}

/** The log's state before an append (empty log: size 0, no frontier, no last hash). */
interface TipState {
  size: number;
  frontier: Buffer[];
  lastHash: HashString | undefined;
}

const TIP_SQL = `SELECT h.tree_size, h.frontier, e.entry_hash
  FROM log_heads h JOIN log_entries e ON e.sequence = h.tree_size
  ORDER BY h.tree_size DESC LIMIT 1`;

const WRITE_SQL = `WITH e AS (
    INSERT INTO log_entries (sequence, kind, body, entry_hash, prev_entry_hash)
    SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::bytea[], $5::bytea[])
  ), n AS (
    INSERT INTO log_nodes (level, idx, hash)
    SELECT * FROM unnest($6::int2[], $7::int8[], $8::bytea[])
  )
  INSERT INTO log_heads (tree_size, root, frontier, head, checkpoint) VALUES ($9, $10, $11::bytea[], $12, $13)`;

/**
 * The lock, then the tip: two statements of one simple query (one round trip), each with its
 * own snapshot under READ COMMITTED, so the tip read sees the commit of the writer waited for.
 */
const LOCK_AND_TIP_SQL = `SELECT pg_advisory_xact_lock(${WRIT_LOCK_NAMESPACE}, ${LOCK_IDS.transparencyLog}); ${TIP_SQL}`;

type TipRow = { tree_size: string; frontier: Buffer[]; entry_hash: Buffer };

/** Takes the append lock and reads the tip; with `begin`, opens the transaction first. */
async function lockAndReadTip(db: Queryable, begin: boolean): Promise<TipState> {
  const results = (await db.query((begin ? "BEGIN; " : "") + LOCK_AND_TIP_SQL)) as unknown as QueryResult<TipRow>[];
  const row = results[results.length - 1]?.rows[0];
  if (!row) return { size: 0, frontier: [], lastHash: undefined };
  return { size: Number(row.tree_size), frontier: row.frontier, lastHash: hashFromBytes(row.entry_hash) };
}

/** Builds the entries after `tip` and their leaf hashes. Throws LogEntryError. */
function buildEntries(tip: TipState, inputs: readonly LogAppendInput[]): { entries: LogEntry[]; leaves: Buffer[] } {
  const entries: LogEntry[] = [];
  const leaves: Buffer[] = [];
  let prev = tip.lastHash;
  let sequence = tip.size;
  for (const input of inputs) {
    sequence += 1;
    const entry = buildLogEntry(input.kind, sequence, input.body, prev);
    entries.push(entry);
    leaves.push(logLeafHash(entry));
    prev = entry.entry_hash;
  }
  return { entries, leaves };
}

/**
 * Appends `inputs` (at least one) to the log inside the caller's open transaction on `client`
 * and signs the new head with `signer` (Ed25519). See the module comment for the guarantees.
 * Throws LogEntryError for an entry that cannot be built (nothing is written), and database
 * errors as they come; the caller then rolls back.
 */
export function appendLogEntries(client: ClientBase, inputs: readonly LogAppendInput[], signer: Signer, opts: LogAppendOptions = {}): Promise<LogAppendResult> {
  return append(client, inputs, signer, opts, false);
}

async function append(client: ClientBase, inputs: readonly LogAppendInput[], signer: Signer, opts: LogAppendOptions, begin: boolean): Promise<LogAppendResult> {
  if (inputs.length === 0) throw new LogEntryError("an append needs at least one entry");
  const tip = await lockAndReadTip(client, begin);
  const { entries, leaves } = buildEntries(tip, inputs);
  const tree = appendLeaves(tip.size, tip.frontier, leaves);
  const head = await signTreeHead(signer, tree.size, tree.root, (opts.now ?? new Date()).toISOString());
  const checkpoint = opts.origin !== undefined ? signCheckpoint(signer, opts.origin, tree.size, tree.root) : null;
  await client.query({
    name: "writ_log_append",
    text: WRITE_SQL,
    values: [
      entries.map((e) => e.sequence),
      entries.map((e) => e.kind),
      entries.map((e) => canonicalJson(e.body)),
      entries.map((e) => hashBytes(e.entry_hash)),
      entries.map((e) => (e.prev_entry_hash !== undefined ? hashBytes(e.prev_entry_hash) : null)),
      tree.nodes.map((n) => n.level),
      tree.nodes.map((n) => n.index),
      tree.nodes.map((n) => n.hash),
      tree.size,
      tree.root,
      tree.frontier,
      JSON.stringify(head),
      checkpoint,
    ],
  });
  return { entries, head, checkpoint };
}

/**
 * {@link appendLogEntries} in a transaction of its own on a client of `pool` (BEGIN travels
 * with the lock and the tip read: three round trips in all).
 */
export async function appendToLog(pool: Pool, inputs: readonly LogAppendInput[], signer: Signer, opts: LogAppendOptions = {}): Promise<LogAppendResult> {
  if (inputs.length === 0) throw new LogEntryError("an append needs at least one entry");
  return withTransaction(pool, (client) => append(client, inputs, signer, opts, true), { selfBegin: true });
}
