/**
 * Retention: deletes the rows the service no longer needs, oldest first, in bounded batches
 * (each one short transaction, so no long lock and no long-running delete).
 *
 * What goes (and nothing else: never the ledger, the transparency log, agreements,
 * delegations, revocations or the registry):
 * - `verify_decisions` stored more than `decisionDays` ago. This is the idempotency window of
 *   `POST /v1/verify`: a retry after it is evaluated afresh; an action recorded in a ledger is
 *   still never spent twice (the spend transaction replays its entry).
 * - `webhook_outbox` rows created more than `webhookDays` ago that are finished (delivered, or
 *   given up). A row still due is kept, however old.
 * - `portal_sign_in_tokens` expired more than a day ago (used or not).
 * - `portal_sessions` expired, or signed out, more than a day ago.
 * - `approvals` finished more than `decisionDays` ago: used, decided (approved or declined), or,
 *   still pending, expired. A pending approval that has not expired is kept, however old.
 * - `period_events` no window can still need: past their `keep_until` (the end of the last
 *   calendar window they were counted in and of their owner's longest rolling window after
 *   them; migrations/0460_period_events_keep_until.sql). One counted in a `total` window is
 *   kept. A release after that finds no event and gives nothing back to windows that closed.
 * - `period_spend` hour counters of rolling windows (window kind `bucket@PT1H`,
 *   migrations/0600_period_hour_buckets.sql) whose hour started more than 367 days ago: no
 *   rolling window (at most 366 days) holds them. The calendar counters are kept.
 *
 * Promises of `pruneOnce`: at most `batchSize` rows per statement and `maxBatches`
 * statements per table per call; every batch takes the transaction-level advisory lock
 * `retention` without waiting, and when another process holds it, this call stops (that
 * process is pruning). Returns the rows deleted per table.
 */
import type { Pool, PoolClient } from "pg";
import { createDecisionPartitionsAhead, decisionsPartitioned, dropOldestDecisionPartition } from "./citus-partitions.js";
import { LOCK_IDS, WRIT_LOCK_NAMESPACE } from "./locks.js";
import { withTransaction } from "./pool.js";

/** What to keep, and how much to delete at a time. */
export interface RetentionPolicy {
  /** Days a verify decision is kept, and a finished approval (at least 1: the denial-burst rule counts the last minute). */
  decisionDays: number;
  /** Days a finished webhook delivery is kept. */
  webhookDays: number;
  /** Rows per delete statement (default 5,000). */
  batchSize?: number;
  /** Delete statements per table per call (default 100). */
  maxBatches?: number;
}

/** The tables pruned. */
export const RETENTION_TABLES = [
  "verify_decisions",
  "webhook_outbox",
  "portal_sign_in_tokens",
  "portal_sessions",
  "approvals",
  "period_events",
  "period_spend",
] as const;
export type RetentionTable = (typeof RETENTION_TABLES)[number];

/** Rows deleted per table, and whether another process held the lock. */
export interface PruneResult {
  deleted: Record<RetentionTable, number>;
  /** True when another process was pruning (this call stopped early). */
  busy: boolean;
}

/** Which rows of each table are old enough to go; `cutoff` is now minus the table's days. */
const OLD: Record<RetentionTable, string> = {
  verify_decisions: "created_at < cutoff",
  webhook_outbox: "next_attempt_at IS NULL AND created_at < cutoff",
  portal_sign_in_tokens: "expires_at < cutoff",
  portal_sessions: "(expires_at < cutoff OR revoked_at < cutoff)",
  // Its last event: used, else decided, else (never decided) expired; cutoff < now, so a
  // pending approval goes only once it expired.
  approvals: "coalesce(used_at, decided_at, expires_at) < cutoff",
  // Its own horizon (days 0: the cutoff is now); NULL (a `total` window) is never past it.
  period_events: "keep_until < cutoff",
  // Hour counters only (the partial index period_spend_buckets finds them).
  period_spend: "window_kind LIKE 'bucket@%' AND window_start < cutoff",
};

/** Each table's key: the columns a batch's rows are deleted by. */
const KEY: Record<RetentionTable, string> = {
  verify_decisions: "agent_id, action_id",
  webhook_outbox: "id",
  portal_sign_in_tokens: "token_hash",
  portal_sessions: "session_hash",
  approvals: "approval_id",
  period_events: "agent_id, agreement_id, action_id, owner",
  period_spend: "agent_id, owner, currency, window_kind, window_start",
};

/**
 * Deletes at most $2 old rows of `table` by their key; $1 is the table's days. Not by `ctid`:
 * a Citus cluster refuses a delete by `ctid` on a distributed table (`verify_decisions` and
 * `period_events` are distributed by agent, docs/scale.md), and runs this one on every shard
 * with the keys the subquery found.
 */
function deleteSql(table: RetentionTable): string {
  const old = OLD[table].replaceAll("cutoff", "(now() - make_interval(days => $1::int))");
  const key = KEY[table];
  return `DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE ${old} LIMIT $2::int)`;
}

/** One pass over every table (see the module comment). */
export async function pruneOnce(pool: Pool, policy: RetentionPolicy): Promise<PruneResult> {
  const batchSize = policy.batchSize ?? 5000;
  const maxBatches = policy.maxBatches ?? 100;
  const days: Record<RetentionTable, number> = {
    verify_decisions: policy.decisionDays,
    webhook_outbox: policy.webhookDays,
    portal_sign_in_tokens: 1,
    portal_sessions: 1,
    approvals: policy.decisionDays,
    period_events: 0,
    period_spend: 367,
  };
  const deleted = Object.fromEntries(RETENTION_TABLES.map((t) => [t, 0])) as Record<RetentionTable, number>;
  /** `batch` in a transaction holding the retention lock; null when another process holds it. */
  const locked = (batch: (c: PoolClient) => Promise<number>) =>
    withTransaction(pool, async (c) => {
      const lock = await c.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1::int, $2::int) AS ok", [WRIT_LOCK_NAMESPACE, LOCK_IDS.retention]);
      if (!lock.rows[0]?.ok) return null;
      return batch(c);
    });
  // On a Citus cluster whose decisions are partitioned by week (src/store/citus-partitions.ts):
  // the partitions ahead first, then the old weeks dropped whole, one per transaction.
  const partitioned = await withTransaction(pool, decisionsPartitioned);
  if (partitioned) {
    if ((await locked(async (c) => Number(await createDecisionPartitionsAhead(c)))) === null) return { deleted, busy: true };
    for (let i = 0; i < maxBatches; i++) {
      const n = await locked(async (c) => (await dropOldestDecisionPartition(c, days.verify_decisions)) ?? -1);
      if (n === null) return { deleted, busy: true };
      if (n < 0) break;
      deleted.verify_decisions += n;
    }
  }
  for (const table of RETENTION_TABLES) {
    if (partitioned && table === "verify_decisions") continue;
    for (let i = 0; i < maxBatches; i++) {
      const n = await locked(async (c) => (await c.query(deleteSql(table), [days[table], batchSize])).rowCount ?? 0);
      if (n === null) return { deleted, busy: true };
      deleted[table] += n;
      if (n < batchSize) break;
    }
  }
  return { deleted, busy: false };
}
