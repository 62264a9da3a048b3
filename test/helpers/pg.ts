/**
 * A fresh, migrated database per test file, on the run's one Postgres (see
 * ./pg-global-setup.ts), so test files can run in parallel without seeing each other's rows.
 *
 * Usage:
 *   const db = await createTestDatabase();      // in beforeAll
 *   ... db.url, db.pool ...
 *   await db.drop();                             // in afterAll
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Pool } from "pg";
import { inject } from "vitest";
import { migrate } from "../../src/store/migrate.js";
import { createPool } from "../../src/store/pool.js";

/** One test database. */
export interface TestDatabase {
  readonly name: string;
  /** Connection URL of this database. */
  readonly url: string;
  /** A pool on it, owned by the helper (ended by `drop`). */
  readonly pool: Pool;
  /** Ends the pool and drops the database. */
  drop(): Promise<void>;
}

/** URL of database `name` on the server of `adminUrl`. */
export function databaseUrl(adminUrl: string, name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates a database with a unique name; migrated unless `migrate: false`. */
export async function createTestDatabase(opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  if (process.env.WRIT_TEST_CITUS === "1") return createCitusTestDatabase(opts);
  const name = `writ_t_${process.pid}_${randomBytes(4).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`));
  const url = databaseUrl(inject("pgAdminUrl"), name);
  return opened(name, url, opts, () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`)).then(() => {}));
}

/** The database `name` at `url`, migrated unless `migrate: false`, with a pool; `drop` ends the pool, then calls `remove` once. */
async function opened(name: string, url: string, opts: { migrate?: boolean }, remove: () => Promise<void>): Promise<TestDatabase> {
  if (opts.migrate ?? true) await migrate(url);
  const pool = createPool(url, { max: 5 });
  let dropped = false;
  return {
    name,
    url,
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end();
      await remove();
    },
  };
}

/**
 * WRIT_TEST_CITUS=1: the test's database is a fresh Citus cluster instead (hack/citus/cluster.ts:
 * a coordinator and two workers on 127.0.0.1, the tables laid out by the migrations: docs/scale.md),
 * stopped by `drop`. For running a suite written for one Postgres (the money and adversary
 * models) against the cluster: `WRIT_TEST_CITUS=1 npx vitest run test/integration/money-model.test.ts`.
 */
async function createCitusTestDatabase(opts: { migrate?: boolean }): Promise<TestDatabase> {
  const { provisionCitus, startCitusCluster } = await import("../../hack/citus/cluster.js");
  const tools = provisionCitus();
  if (!tools) throw new Error("WRIT_TEST_CITUS=1, but Citus is not installed and its source is not there (hack/citus/provision.sh)");
  const cluster = await startCitusCluster({ tools, parameters: { "citus.shard_count": 4, fsync: "off" } });
  return opened(cluster.database, cluster.url(), opts, () => cluster.stop());
}
