/**
 * Scenario (e) of `npm run bench:verify`: a plain ledger transaction, what Postgres needs to
 * record a spend durably, as a payment system without batching would write it (the shape of
 * pgbench's TPC-B-like script): BEGIN; `SELECT … FOR UPDATE` of an account row; INSERT the
 * entry; UPDATE the account's total; COMMIT, each statement one round trip (prepared), through
 * `pg` against the same Postgres (its default durability), from `connections` concurrent loops
 * through a pool of `poolSize` connections, over `rows` accounts round-robin, for `seconds`.
 * Its own two tables (`bench_plain_accounts`, `bench_plain_entries`), made here.
 */
import { createPool } from "../../../src/store/pool.js";
import type { DriverResult } from "./driver.js";
import { closedLoop } from "./loop.js";

/** Options of `ledgerLoop`. */
export interface LedgerLoopOptions {
  connections: number;
  poolSize: number;
  seconds: number;
  rows: number;
}

/** Runs the loop; the same figures the HTTP driver reports (every committed transaction counts as "COMMIT"). */
export async function ledgerLoop(databaseUrl: string, o: LedgerLoopOptions): Promise<DriverResult> {
  const pool = createPool(databaseUrl, { max: o.poolSize });
  try {
    await pool.query(`CREATE TABLE IF NOT EXISTS bench_plain_accounts (id int PRIMARY KEY, total bigint NOT NULL DEFAULT 0);
      CREATE TABLE IF NOT EXISTS bench_plain_entries (id bigserial PRIMARY KEY, account int NOT NULL REFERENCES bench_plain_accounts (id), amount bigint NOT NULL, at timestamptz NOT NULL DEFAULT now());
      TRUNCATE bench_plain_entries, bench_plain_accounts;`);
    await pool.query("INSERT INTO bench_plain_accounts (id) SELECT generate_series(1, $1::int)", [o.rows]);
    return await closedLoop(o.connections, o.seconds, async (i) => {
      const account = (i % o.rows) + 1;
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query({ name: "plain_lock", text: "SELECT total FROM bench_plain_accounts WHERE id = $1 FOR UPDATE", values: [account] });
        await client.query({ name: "plain_entry", text: "INSERT INTO bench_plain_entries (account, amount) VALUES ($1, $2)", values: [account, 100] });
        await client.query({ name: "plain_total", text: "UPDATE bench_plain_accounts SET total = total + $2 WHERE id = $1", values: [account, 100] });
        await client.query("COMMIT");
        return "COMMIT";
      } catch (e) {
        await client.query("ROLLBACK").catch(() => {});
        throw e;
      } finally {
        client.release();
      }
    });
  } finally {
    await pool.end();
  }
}
