/**
 * verify_decisions by time partitions on a Citus cluster (docs/scale.md, "Retention by time
 * partitions"). Plain Postgres never gets them: its table, its key (agent_id, action_id) and its
 * sweep (row deletes, src/store/retention.ts) are unchanged, and a verify there costs what it
 * did.
 *
 * Where the Citus layout runs (src/store/citus.ts) and the setting WRIT_CITUS_DECISION_PARTITIONS
 * is `week` (`off` by default: what the partitions cost each ALLOW, measured in docs/scale.md,
 * is more than the sweep's deletes they save), `verify_decisions`, before it is distributed, becomes a table
 * range-partitioned by `created_at` in UTC weeks (Monday to Monday; Citus's
 * `create_time_partitions` names them `verify_decisions_pYYYYwWW`), distributed by agent_id with
 * the agent's other tables, its partitions with it. The retention pass creates the partitions
 * ahead (this week's and the next one's, `create_time_partitions`, so an insert always finds its
 * partition while passes run) and drops each partition whose week ended more than
 * WRIT_DECISION_RETENTION_DAYS ago whole (found in Citus's `time_partitions` view; dropped one
 * per statement, its rows counted first: Citus's `drop_old_time_partitions` drops them all in one
 * transaction and counts nothing).
 *
 * Why weeks: a look-up of an action's answer names the agent and the action, not the time, so
 * it probes every partition. With weeks, 30 days of retention keep 5 or 6 weeks, plus the next
 * one: 6 or 7 probes, against 31 to 38 with days. A row lives until its week has ended more than
 * the retention ago: at most 7 days longer than the setting (the idempotency window is at least
 * the setting, never shorter).
 *
 * One answer per action: the key (agent_id, action_id) cannot be a key of a partitioned table,
 * so the table's key is (agent_id, action_id, created_at) (the answers' `ON CONFLICT` statements
 * are unchanged and never fire) and a trigger keeps one answer per action
 * (sql/functions/writ_decision_once.sql).
 *
 * A cluster laid out before with an unpartitioned `verify_decisions` keeps it (its sweep deletes
 * rows by key, as on plain Postgres); so does `off`. The setting is read where the table is laid
 * out, once: changing it later changes nothing.
 */
import type { ClientBase } from "pg";

/** WRIT_CITUS_DECISION_PARTITIONS. */
export type DecisionPartitions = "week" | "off";

/** WRIT_CITUS_DECISION_PARTITIONS of `env`; an unknown value throws (naming the variable and what it accepts). */
export function decisionPartitionsFromEnv(env: NodeJS.ProcessEnv): DecisionPartitions {
  const raw = env.WRIT_CITUS_DECISION_PARTITIONS?.trim();
  if (raw === undefined || raw === "" || raw === "off") return "off";
  if (raw === "week") return "week";
  throw new Error(`WRIT_CITUS_DECISION_PARTITIONS must be week or off, not ${JSON.stringify(raw.slice(0, 40))}`);
}

/** The partitions' length. */
export const DECISION_PARTITION_INTERVAL = "7 days";

/** How far ahead of now the partitions reach after each pass (this week's, and the next one's). */
export const DECISION_PARTITIONS_AHEAD = "7 days";

/** The lock timeout of a partition's creation or drop (each locks the table for a moment). */
export const PARTITION_LOCK_TIMEOUT = "2s";

/** Whether `verify_decisions` is a partitioned table here (only where the Citus layout made it one). */
export async function decisionsPartitioned(c: ClientBase): Promise<boolean> {
  const { rows } = await c.query<{ p: boolean }>(
    "SELECT coalesce((SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass('verify_decisions')), false) AS p",
  );
  return rows[0]?.p === true;
}

/**
 * Creates the missing partitions from now to DECISION_PARTITIONS_AHEAD ahead (Citus's
 * `create_time_partitions`, weeks aligned in UTC); inside the caller's transaction. Returns
 * whether it created any.
 */
export async function createDecisionPartitionsAhead(c: ClientBase, from = "now()"): Promise<boolean> {
  // The time zone and the lock timeout of this call only (set back after it: the caller's transaction may go on).
  const { rows: was } = await c.query<{ tz: string; lt: string }>(
    `SELECT current_setting('TimeZone') AS tz, current_setting('lock_timeout') AS lt,
            set_config('TimeZone', 'UTC', true), set_config('lock_timeout', '${PARTITION_LOCK_TIMEOUT}', true)`,
  );
  const { rows } = await c.query<{ made: boolean }>(
    `SELECT create_time_partitions('verify_decisions', interval '${DECISION_PARTITION_INTERVAL}', now() + interval '${DECISION_PARTITIONS_AHEAD}', ${from}) AS made`,
  );
  await c.query("SELECT set_config('TimeZone', $1, true), set_config('lock_timeout', $2, true)", [was[0]?.tz ?? "UTC", was[0]?.lt ?? "0"]);
  return rows[0]?.made === true;
}

/**
 * On every migrate of a cluster whose verify_decisions is partitioned: the partitions ahead,
 * inside the caller's transaction, under a savepoint: when the table's lock is not had within
 * PARTITION_LOCK_TIMEOUT (a long transaction holds it), nothing is created and the caller's
 * transaction goes on (the next retention pass creates them).
 */
export async function ensureDecisionPartitionsAhead(c: ClientBase): Promise<void> {
  if (!(await decisionsPartitioned(c))) return;
  await c.query("SAVEPOINT writ_decision_partitions");
  try {
    await createDecisionPartitionsAhead(c);
    await c.query("RELEASE SAVEPOINT writ_decision_partitions");
  } catch (e) {
    await c.query("ROLLBACK TO SAVEPOINT writ_decision_partitions");
    if ((e as { code?: string } | null)?.code !== "55P03") throw e;
  }
}

/**
 * Drops the oldest partition whose week ended more than `days` ago (Citus's `time_partitions`
 * view), inside the caller's transaction; returns its rows, or null when there is none.
 */
export async function dropOldestDecisionPartition(c: ClientBase, days: number): Promise<number | null> {
  const { rows } = await c.query<{ name: string }>(
    `SELECT partition::text AS name FROM time_partitions
      WHERE parent_table = 'verify_decisions'::regclass AND to_value IS NOT NULL AND to_value::timestamptz <= now() - make_interval(days => $1::int)
      ORDER BY to_value::timestamptz LIMIT 1`,
    [days],
  );
  const name = rows[0]?.name;
  if (name === undefined) return null;
  await c.query(`SET LOCAL lock_timeout = '${PARTITION_LOCK_TIMEOUT}'`);
  const count = await c.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${name}`);
  await c.query(`DROP TABLE ${name}`);
  return Number(count.rows[0]?.n ?? 0);
}

/**
 * Makes the local (not yet distributed) `verify_decisions` a table partitioned by week, with its
 * rows, its indexes and the trigger writ_decision_once; inside the caller's transaction (the
 * Citus layout's, before it distributes the table). Returns false, doing nothing, when the
 * table is partitioned already or is distributed already (a cluster laid out before: it keeps
 * its table).
 */
export async function partitionDecisions(c: ClientBase): Promise<boolean> {
  const { rows } = await c.query<{ kind: string; dist: boolean }>(
    `SELECT c.relkind::text AS kind, EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = c.oid) AS dist
       FROM pg_class c WHERE c.oid = to_regclass('verify_decisions')`,
  );
  const t = rows[0];
  if (t === undefined || t.kind !== "r" || t.dist) return false;
  // The indexes other than the key, as they are defined (they name the table verify_decisions,
  // which the partitioned table is called when they are made again).
  const { rows: indexes } = await c.query<{ def: string; name: string }>(
    `SELECT pg_get_indexdef(i.indexrelid) AS def, i.indexrelid::regclass::text AS name FROM pg_index i
      WHERE i.indrelid = 'verify_decisions'::regclass AND NOT i.indisprimary ORDER BY 2`,
  );
  for (const i of indexes) await c.query(`DROP INDEX ${i.name}`);
  await c.query("ALTER TABLE verify_decisions RENAME TO verify_decisions_unpartitioned");
  await c.query("ALTER TABLE verify_decisions_unpartitioned RENAME CONSTRAINT verify_decisions_pkey TO verify_decisions_unpartitioned_pkey");
  await c.query(
    `CREATE TABLE verify_decisions (LIKE verify_decisions_unpartitioned INCLUDING DEFAULTS,
       CONSTRAINT verify_decisions_pkey PRIMARY KEY (agent_id, action_id, created_at)) PARTITION BY RANGE (created_at)`,
  );
  for (const i of indexes) await c.query(i.def);
  await createDecisionPartitionsAhead(c, "least(now(), (SELECT min(created_at) FROM verify_decisions_unpartitioned))");
  await c.query("CREATE TRIGGER verify_decisions_once BEFORE INSERT ON verify_decisions FOR EACH ROW EXECUTE FUNCTION writ_decision_once()");
  await c.query("INSERT INTO verify_decisions SELECT * FROM verify_decisions_unpartitioned");
  await c.query("DROP TABLE verify_decisions_unpartitioned");
  return true;
}
