/**
 * Schema migrations: plain SQL files in `src/store/migrations/`, applied in order by
 * node-pg-migrate 8's programmatic `runner`.
 *
 * File rules: `NNNN_name.sql` (a numeric prefix, gaps left for later files: 0010, 0020, ...),
 * with a `-- Up Migration` section and an optional `-- Down Migration` section; each file runs in
 * its own transaction and is recorded in the table `pgmigrations`. Only `.sql` files are loaded:
 * node-pg-migrate loads any other file with a native `import()`, which cannot load TypeScript
 * under vitest (no tsx loader there), so SQL is the one format that works under tsx, node and
 * the tests alike. A file, once applied anywhere, is never edited: add a new one.
 *
 * SQL functions: one file per function in `src/store/sql/functions/`, named after it, holding
 * its one current body (`CREATE OR REPLACE FUNCTION`). They are applied after the migrations,
 * on every `migrate`, in one transaction (`applyFunctions`), so a reader finds a function's
 * body by its name, and a body is changed by editing its file. Old migrations that created
 * or replaced a function stay as they are (history). A change Postgres cannot make with
 * CREATE OR REPLACE (another result type, another signature) takes a migration that drops the
 * old function; the file then creates the new one.
 *
 * Concurrency: two processes starting together serialise on a session-level Postgres advisory
 * lock (`LOCK_IDS.migrations`); the second waits, then finds nothing left to run. (The
 * runner's own lock is a try-lock that fails instead of waiting, so it is turned off.)
 *
 * On a Citus coordinator the migrations are followed, under the same lock, by the Citus layout
 * (./citus.ts: the reference tables; WRIT_CITUS); on plain Postgres that step does nothing.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "pg";
import { runner } from "node-pg-migrate";
import { applyCitusLayout, citusModeFromEnv } from "./citus.js";
import { decisionPartitionsFromEnv } from "./citus-partitions.js";
import { newClient } from "./cluster.js";
import { isDbUnavailable } from "./db-errors.js";
import { LOCK_IDS, WRIT_LOCK_NAMESPACE } from "./locks.js";

/** The folder holding the migration files. */
export const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));

/** The folder holding the SQL functions, one `<name>.sql` per function. */
export const FUNCTIONS_DIR = fileURLToPath(new URL("./sql/functions", import.meta.url));

/** Name of the table that records applied migrations. */
export const MIGRATIONS_TABLE = "pgmigrations";

/** Creates the database `name` unless it exists, connected to another database of the server (`serverUrl`). */
export async function ensureDatabase(serverUrl: string, name: string): Promise<void> {
  const c = newClient(serverUrl);
  c.on("error", () => {}); // a connection lost mid-query (Postgres stopping) rejects that query; unheard, the event would crash the process
  await c.connect();
  try {
    const { rowCount } = await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) await c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`);
  } finally {
    await c.end();
  }
}

/** Where migration progress is reported (default: nowhere). */
export interface MigrateLog {
  info(msg: string): void;
}

/** Applies every pending migration to `databaseUrl`; returns the names applied, in order. */
export async function migrate(databaseUrl: string, log?: MigrateLog): Promise<string[]> {
  const citusMode = citusModeFromEnv(process.env);
  const decisionPartitions = decisionPartitionsFromEnv(process.env);
  const client = newClient(databaseUrl, { application_name: "writ-migrate" });
  client.on("error", () => {}); // as in ensureDatabase: the query under way rejects instead
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1::int, $2::int)", [WRIT_LOCK_NAMESPACE, LOCK_IDS.migrations]);
    const info = (msg: string) => log?.info(msg);
    const ran = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      // Everything that is not a .sql file (a README, an editor backup) is ignored.
      ignorePattern: "(?!.*\\.sql$).*",
      migrationsTable: MIGRATIONS_TABLE,
      direction: "up",
      checkOrder: true,
      noLock: true,
      // node-pg-migrate reports "Can't determine timestamp" at error level for short numeric
      // prefixes (it then orders them numerically, as wanted); real failures throw instead.
      logger: { debug: () => {}, info, warn: info, error: () => {} },
    });
    await applyFunctions(client);
    const layout = await applyCitusLayout(client, citusMode, decisionPartitions);
    if (layout.partitionedDecisions === true) info(`citus ${layout.citus}: verify_decisions partitioned by week`);
    if (layout.madeReference.length > 0) info(`citus ${layout.citus}: reference tables ${layout.madeReference.join(", ")}`);
    if (layout.distributed.length > 0) info(`citus ${layout.citus}: distributed by agent_id ${layout.distributed.join(", ")}`);
    return ran.map((m) => m.name);
  } finally {
    await client.query("SELECT pg_advisory_unlock($1::int, $2::int)", [WRIT_LOCK_NAMESPACE, LOCK_IDS.migrations]).catch(() => {});
    await client.end().catch(() => {});
  }
}

/**
 * Creates or replaces every function of FUNCTIONS_DIR, in one transaction. Bodies are not
 * checked against each other while they are created (`check_function_bodies` off, as pg_dump
 * does), so the files' order does not matter.
 */
async function applyFunctions(client: Client): Promise<void> {
  const files = readdirSync(FUNCTIONS_DIR)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  const bodies = files.map((f) => readFileSync(join(FUNCTIONS_DIR, f), "utf8"));
  try {
    await client.query(["BEGIN", "SET LOCAL check_function_bodies = off", ...bodies, "COMMIT"].join(";\n"));
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
}

/** How `migrateWhenReachable` reports. */
export interface RetryingMigrateLog extends MigrateLog {
  /** Postgres could not be reached; the next attempt is in `retryInMs`. */
  unreachable(err: unknown, retryInMs: number): void;
}

/** Waits `ms`; `hold` false: the timer does not keep the process alive. */
const pause = (ms: number, hold: boolean) =>
  new Promise((r) => {
    const t = setTimeout(r, ms);
    if (!hold) t.unref();
  });

/**
 * `migrate`, retried for as long as Postgres cannot be reached (a process started before its
 * database, or during a failover with no primary yet): 250 ms, doubling up to 10 s between
 * attempts, until it succeeds or `stopped()` says to give up. Returns the migrations applied, or
 * null when stopped first. Any other failure (a migration that fails) is thrown at once.
 * Without `stopped` the wait between attempts holds the process (nothing else may be keeping it
 * alive yet); with it, a pending retry never keeps a stopping process alive.
 */
export async function migrateWhenReachable(databaseUrl: string, log: RetryingMigrateLog, stopped?: () => boolean): Promise<string[] | null> {
  for (let attempt = 0; !stopped?.(); attempt++) {
    try {
      return await migrate(databaseUrl, log);
    } catch (err) {
      if (!isDbUnavailable(err)) throw err;
      const wait = Math.min(10_000, 250 * 2 ** Math.min(attempt, 6));
      log.unreachable(err, wait);
      await pause(wait, stopped === undefined);
    }
  }
  return null;
}
