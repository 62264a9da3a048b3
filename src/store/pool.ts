/**
 * The Postgres connection pool of a process and the small query interface store modules take.
 *
 * Promise: a pool from `createPool` never crashes the process when an idle connection dies
 * (the error is logged and the connection discarded), and a query waiting for a connection
 * fails after `connectionTimeoutMillis` instead of hanging, so the API can answer 503.
 */
import pg from "pg";
import type { Pool, PoolClient, QueryResult, QueryResultRow } from "pg";

/** Anything store modules can query: a Pool or a checked-out client. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/** Options of `createPool`. */
export interface PoolOptions {
  /** Largest number of connections (default 10). */
  max?: number;
  /** How long a query waits for a connection before failing (default 5000 ms). */
  connectionTimeoutMillis?: number;
  /** Called with errors of idle connections (default: ignored). */
  onError?: (err: Error) => void;
  /** application_name shown in pg_stat_activity (default "writ"). */
  applicationName?: string;
}

/** A pool for `databaseUrl`. The caller ends it (`pool.end()`). */
export function createPool(databaseUrl: string, opts: PoolOptions = {}): Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: opts.max ?? 10,
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 5000,
    idleTimeoutMillis: 30_000,
    application_name: opts.applicationName ?? "writ",
  });
  pool.on("error", (err) => opts.onError?.(err));
  return pool;
}

/** Runs `fn` in one transaction on a client of `pool`: COMMIT on success, ROLLBACK on throw. */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query("BEGIN");
    const out = await fn(client);
    await client.query("COMMIT");
    return out;
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {
      broken = true;
    });
    throw e;
  } finally {
    // A client whose ROLLBACK failed is in an unknown state: destroy it rather than reuse it.
    client.release(broken);
  }
}
