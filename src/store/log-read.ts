/**
 * Reading the transparency log: entries by sequence or by entry hash, signed heads and their
 * checkpoints, and proofs built from the stored full-subtree nodes.
 *
 * Promise: every node a proof's plan names (the leaf included) is read in ONE query; a proof
 * against the latest head costs one more (the head), a proof against a given size none. Reads
 * run as named prepared statements. A lookup outside the log throws a `LogLookupError` with a
 * stable code, never a database error.
 */
import type { ClientBase, QueryResult, QueryResultRow } from "pg";
import { hashBytes, hashFromBytes, type HashString } from "../core/canonical/index.js";
import {
  consistencyPlan,
  consistencyProof,
  inclusionPlan,
  inclusionProof,
  nodeKey,
  proofSides,
  rootAt,
  rootPlan,
  type LogEntry,
  type LogKind,
  type NodeId,
  type NodeReader,
  type ProofSide,
  type TreeHead,
} from "../core/tlog/index.js";
import type { Queryable } from "./pool.js";

/** Stable codes of {@link LogLookupError}. */
export type LogLookupCode = "NO_TREE_HEAD" | "ENTRY_NOT_FOUND" | "TREE_SIZE_BEYOND_HEAD" | "SIZES_OUT_OF_ORDER";

/** A read outside the log: no head yet, no such entry, a size beyond the latest head. */
export class LogLookupError extends Error {
  override readonly name = "LogLookupError";
  constructor(
    readonly code: LogLookupCode,
    message: string,
  ) {
    super(message);
  }
}

/** A stored signed head. */
export interface StoredTreeHead {
  head: TreeHead;
  /** The C2SP checkpoint stored with it, or null. */
  checkpoint: string | null;
  treeSize: number;
  root: Buffer;
}

/** The inclusion proof object of the spec. */
export interface InclusionProofAnswer {
  sequence: number;
  index: number;
  leaf: HashString;
  proof: { hash: HashString; side: ProofSide }[];
  root: HashString;
  tree_size: number;
}

/** A consistency proof between the trees of `first` and `second` leaves. */
export interface ConsistencyProofAnswer {
  first: number;
  second: number;
  proof: HashString[];
}

interface EntryRow {
  sequence: string;
  kind: LogKind;
  body: string;
  entry_hash: Buffer;
  prev_entry_hash: Buffer | null;
}

interface HeadRow {
  tree_size: string;
  root: Buffer;
  head: string;
  checkpoint: string | null;
}

const ENTRY_COLUMNS = "sequence, kind, body, entry_hash, prev_entry_hash";
const HEAD_COLUMNS = "tree_size, root, head, checkpoint";
const NODES_SQL = `SELECT n.level, n.idx, n.hash FROM unnest($1::int2[], $2::int8[]) AS k(level, idx)
  JOIN log_nodes n ON n.level = k.level AND n.idx = k.idx`;

/**
 * Runs a read as a named prepared statement: each connection parses and plans it once, which
 * is most of the cost of these small lookups. (Both Queryables Writ passes, a Pool and a
 * PoolClient, take a query config.)
 */
function query<R extends QueryResultRow>(db: Queryable, name: string, text: string, values: unknown[] = []): Promise<QueryResult<R>> {
  return (db as unknown as Pick<ClientBase, "query">).query<R>({ name, text, values });
}

function toEntry(r: EntryRow): LogEntry {
  const entry: LogEntry = {
    kind: r.kind,
    sequence: Number(r.sequence),
    body: JSON.parse(r.body) as Record<string, unknown>,
    entry_hash: hashFromBytes(r.entry_hash),
  };
  if (r.prev_entry_hash !== null) entry.prev_entry_hash = hashFromBytes(r.prev_entry_hash);
  return entry;
}

function toHead(r: HeadRow): StoredTreeHead {
  return { head: JSON.parse(r.head) as TreeHead, checkpoint: r.checkpoint, treeSize: Number(r.tree_size), root: r.root };
}

/** Entry `sequence`, or undefined. `sequence` must be a safe integer (callers parse first). */
export async function logEntryBySequence(db: Queryable, sequence: number): Promise<LogEntry | undefined> {
  const { rows } = await query<EntryRow>(db, "writ_log_entry", `SELECT ${ENTRY_COLUMNS} FROM log_entries WHERE sequence = $1`, [sequence]);
  return rows[0] ? toEntry(rows[0]) : undefined;
}

/** The entry whose `entry_hash` is `hash`, or undefined. */
export async function logEntryByHash(db: Queryable, hash: HashString): Promise<LogEntry | undefined> {
  const { rows } = await query<EntryRow>(db, "writ_log_entry_by_hash", `SELECT ${ENTRY_COLUMNS} FROM log_entries WHERE entry_hash = $1`, [hashBytes(hash)]);
  return rows[0] ? toEntry(rows[0]) : undefined;
}

/** The latest signed head, or undefined when nothing was ever appended. */
export async function latestTreeHead(db: Queryable): Promise<StoredTreeHead | undefined> {
  const { rows } = await query<HeadRow>(db, "writ_log_head_latest", `SELECT ${HEAD_COLUMNS} FROM log_heads ORDER BY tree_size DESC LIMIT 1`);
  return rows[0] ? toHead(rows[0]) : undefined;
}

/** A NodeReader that also tells whether it holds a node. */
export type StoredNodes = NodeReader & { has(level: number, index: number): boolean };

/** Reads the nodes `ids` in one query; the reader throws on a node the store does not hold. */
export async function readNodes(db: Queryable, ids: readonly NodeId[]): Promise<StoredNodes> {
  const unique = new Map(ids.map((id) => [nodeKey(id.level, id.index), id]));
  const wanted = [...unique.values()];
  const found = new Map<string, Buffer>();
  if (wanted.length > 0) {
    const { rows } = await query<{ level: number; idx: string; hash: Buffer }>(db, "writ_log_nodes", NODES_SQL, [
      wanted.map((id) => id.level),
      wanted.map((id) => id.index),
    ]);
    for (const r of rows) found.set(`${r.level}:${r.idx}`, r.hash);
  }
  const read = (level: number, index: number) => {
    const h = found.get(nodeKey(level, index));
    if (!h) throw new Error(`log node ${nodeKey(level, index)} is missing from the store`);
    return h;
  };
  return Object.assign(read, { has: (level: number, index: number) => found.has(nodeKey(level, index)) });
}

async function requireHead(db: Queryable): Promise<StoredTreeHead> {
  const latest = await latestTreeHead(db);
  if (!latest) throw new LogLookupError("NO_TREE_HEAD", "the transparency log has no signed tree head");
  return latest;
}

function beyondHead(size: number): LogLookupError {
  return new LogLookupError("TREE_SIZE_BEYOND_HEAD", `tree size ${size} is beyond the latest signed tree head`);
}

/**
 * The inclusion proof of entry `sequence` in the tree of the latest signed head (two queries),
 * or of the first `treeSize` leaves when given (ONE query: the root is computed from the stored
 * nodes, so it equals the root of any head signed at that size, and a size beyond the log is
 * recognised by its missing nodes). Throws LogLookupError.
 */
export async function inclusionProofFor(db: Queryable, sequence: number, treeSize?: number): Promise<InclusionProofAnswer> {
  const latest = treeSize === undefined ? await requireHead(db) : undefined;
  const size = treeSize ?? (latest as StoredTreeHead).treeSize;
  if (sequence < 1 || sequence > size) throw new LogLookupError("ENTRY_NOT_FOUND", "log entry was not found");
  const index = sequence - 1;
  const plan = inclusionPlan(index, size);
  const ids = [...plan, { level: 0, index }, ...(latest ? [] : rootPlan(size))];
  const read = await readNodes(db, ids);
  // Every node of a tree of `size` leaves exists once the log holds `size` leaves, never before.
  if (!ids.every((id) => read.has(id.level, id.index))) throw beyondHead(size);
  const proof = inclusionProof(index, size, read);
  const sides = proofSides(index, size, proof);
  return {
    sequence,
    index,
    leaf: hashFromBytes(read(0, index)),
    proof: proof.map((h, i) => ({ hash: hashFromBytes(h), side: sides[i] as ProofSide })),
    root: hashFromBytes(latest ? latest.root : rootAt(size, read)),
    tree_size: size,
  };
}

/**
 * The RFC 9162 consistency proof from the first `first` leaves to the first `second` leaves
 * (1 <= first <= second <= latest head size; equal sizes give an empty proof). Throws
 * LogLookupError.
 */
export async function consistencyProofFor(db: Queryable, first: number, second: number): Promise<ConsistencyProofAnswer> {
  if (first < 1 || first > second) throw new LogLookupError("SIZES_OUT_OF_ORDER", "consistency proof needs 1 <= first <= second");
  if (second > (await requireHead(db)).treeSize) throw beyondHead(second);
  const read = await readNodes(db, consistencyPlan(first, second));
  return { first, second, proof: consistencyProof(first, second, read).map(hashFromBytes) };
}
