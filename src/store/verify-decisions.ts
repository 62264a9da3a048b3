/**
 * Idempotency of `POST /v1/verify` (table `verify_decisions`, migrations/0060_agreements.sql):
 * the decision given to (agent_id, action_id) and the hash of the request it answered.
 *
 * Promise: at most one decision per (agent, action); the first stored wins and later saves
 * return it. An ALLOW is stored by the spend transaction itself (src/store/ledger/spend.ts, option
 * `decision`), so a recorded spend and its answer commit together; other verdicts are saved
 * with `saveVerifyDecision` (or, outside any transaction and in batches, `saveRefusalDecisions`, which commits
 * without waiting for the WAL flush: see docs/verify.md, "Durability"). A retry with the same request hash gets the stored body; the same
 * action id with another request hash is a conflicting reuse the caller refuses.
 */
import type { HashString } from "../core/canonical/index.js";
import type { Pool } from "pg";
import type { Queryable } from "./pool.js";

/** A stored decision. */
export interface StoredVerifyDecision {
  agentId: string;
  actionId: string;
  agreementId: string | null;
  requestHash: HashString;
  /** The response body as answered. */
  decision: Record<string, unknown>;
  createdAt: Date;
}

interface Row {
  agent_id: string;
  action_id: string;
  agreement_id: string | null;
  request_hash: HashString;
  decision: Record<string, unknown>;
  created_at: Date;
}

const COLUMNS = "agent_id, action_id, agreement_id, request_hash, decision, created_at";

function toStored(r: Row): StoredVerifyDecision {
  return {
    agentId: r.agent_id,
    actionId: r.action_id,
    agreementId: r.agreement_id,
    requestHash: r.request_hash,
    decision: r.decision,
    createdAt: r.created_at,
  };
}

/** The decision stored for (agentId, actionId), or undefined. */
export async function findVerifyDecision(q: Queryable, agentId: string, actionId: string): Promise<StoredVerifyDecision | undefined> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM verify_decisions WHERE agent_id = $1 AND action_id = $2`, [agentId, actionId]);
  return rows[0] ? toStored(rows[0]) : undefined;
}

/** A decision to store. */
export interface NewVerifyDecision {
  agentId: string;
  actionId: string;
  agreementId: string | null;
  requestHash: HashString;
  decision: Record<string, unknown>;
  /** DENIED_ATTEMPT_BURST does not count it (the column `burst_exempt`, ./verify-reads.ts); default false. */
  burstExempt?: boolean;
}

/** Stores a decision unless one exists; returns the stored one (`stored` false when another won). */
export async function saveVerifyDecision(q: Queryable, d: NewVerifyDecision): Promise<{ stored: boolean; decision: StoredVerifyDecision }> {
  const { rows } = await q.query<Row>(
    `INSERT INTO verify_decisions (agent_id, action_id, agreement_id, request_hash, decision, burst_exempt) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
    [d.agentId, d.actionId, d.agreementId, d.requestHash, JSON.stringify(d.decision), d.burstExempt ?? false],
  );
  return settled(q, d, rows[0]);
}

/**
 * The insert of `saveRefusalDecisions`: ONE statement, its own (implicit) transaction, which
 * sets `synchronous_commit` off for that transaction only (`set_config(…, true)`; it is
 * evaluated before the commit and reset by it). The rows come as one JSON array (one
 * parameter, parsed once by Postgres); one row comes back: NULL when every row was stored,
 * otherwise the keys of those that were (the others were stored before). `ON CONFLICT DO
 * NOTHING` names no key: on plain Postgres the key (agent_id, action_id) is the table's one
 * unique index; on a Citus cluster whose table is partitioned by week the trigger
 * writ_decision_once skips an answered action instead (src/store/citus-partitions.ts).
 */
const SAVE_ASYNC_SQL = `WITH ins AS (
  INSERT INTO verify_decisions (agent_id, action_id, agreement_id, request_hash, decision, burst_exempt)
  SELECT t.agent_id, t.action_id, t.agreement_id, t.request_hash, t.decision, coalesce(t.burst_exempt, false)
  FROM jsonb_to_recordset($1::jsonb) AS t(agent_id text, action_id text, agreement_id text, request_hash text, decision jsonb, burst_exempt boolean),
       (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
  ON CONFLICT DO NOTHING RETURNING agent_id, action_id)
SELECT CASE WHEN count(*) < $2 THEN coalesce(json_agg(json_build_array(agent_id, action_id)), '[]') END AS stored FROM ins`;

const FIND_MANY_SQL = `SELECT ${COLUMNS} FROM verify_decisions d
WHERE (d.agent_id, d.action_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))`;

/** What `saveRefusalDecisions` says of one decision. */
export type SavedRefusal = { stored: true } | { stored: false; decision: StoredVerifyDecision };

/**
 * As `saveVerifyDecision` for several decisions that are NOT ALLOWs (throws for an ALLOW, or
 * for two with one (agent, action)): one statement in a transaction of its own on `pool`
 * (never inside a caller's transaction, whose other writes it would make asynchronous too)
 * committed with `synchronous_commit = off`, so it does not wait for the WAL flush, plus, when
 * some were stored before, one read of those. A crash of Postgres (or the machine) may lose
 * such a decision committed within the last moments (at most 3 × wal_writer_delay, or until
 * any later synchronous commit flushed the WAL); a retry of the action is then evaluated
 * again. The trade-off is documented in docs/verify.md ("Durability"). Results are in the
 * order of `ds`: `stored`, or the decision stored before.
 */
export async function saveRefusalDecisions(pool: Pool, ds: readonly NewVerifyDecision[]): Promise<SavedRefusal[]> {
  if (ds.length === 0) return [];
  const keys = new Set<string>();
  const rows: string[] = [];
  for (const d of ds) {
    if (d.decision.verdict === "ALLOW") throw new Error("an ALLOW is stored durably, by its spend transaction");
    const k = decisionKey(d.agentId, d.actionId);
    if (keys.has(k)) throw new Error("one batch cannot hold two decisions of one action");
    keys.add(k);
    rows.push(
      JSON.stringify({
        agent_id: d.agentId,
        action_id: d.actionId,
        agreement_id: d.agreementId,
        request_hash: d.requestHash,
        decision: d.decision,
        burst_exempt: d.burstExempt === true,
      }),
    );
  }
  const res = await pool.query<{ stored: [string, string][] | null }>({
    name: "writ_verify_decisions_async",
    text: SAVE_ASYNC_SQL,
    values: [`[${rows.join(",")}]`, ds.length],
  });
  const stored = res.rows[0]?.stored;
  // Every row was inserted: nothing else to read.
  if (!stored) return ds.map((): SavedRefusal => ({ stored: true }));
  const inserted = new Set(stored.map(([agentId, actionId]) => decisionKey(agentId, actionId)));
  const missing = ds.filter((d) => !inserted.has(decisionKey(d.agentId, d.actionId)));
  // Others stored them first; a new statement (a new snapshot) sees their rows.
  const others = new Map<string, Row>();
  const found = await pool.query<Row>(FIND_MANY_SQL, [missing.map((d) => d.agentId), missing.map((d) => d.actionId)]);
  for (const r of found.rows) others.set(decisionKey(r.agent_id, r.action_id), r);
  return ds.map((d): SavedRefusal => {
    const k = decisionKey(d.agentId, d.actionId);
    if (inserted.has(k)) return { stored: true };
    const other = others.get(k);
    if (!other) throw new Error("verify decision was neither stored nor found");
    return { stored: false, decision: toStored(other) };
  });
}

/** One string per (agent, action), for sets and maps of decisions. */
export function decisionKey(agentId: string, actionId: string): string {
  return `${agentId}\u0000${actionId}`;
}

async function settled(q: Queryable, d: NewVerifyDecision, row: Row | undefined): Promise<{ stored: boolean; decision: StoredVerifyDecision }> {
  if (row) return { stored: true, decision: toStored(row) };
  // Another transaction stored it; a new statement (a new snapshot) sees its row.
  const other = await findVerifyDecision(q, d.agentId, d.actionId);
  if (!other) throw new Error("verify decision was neither stored nor found");
  return { stored: false, decision: other };
}
