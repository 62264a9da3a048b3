/**
 * The Postgres connection pool of a process and the small query interface store modules take.
 *
 * Promise: a pool from `createPool` never crashes the process when a connection dies, idle
 * (the error is reported to `onError` and the connection discarded) or checked out (the
 * holder's next query fails; the connection is discarded on release), and a query waiting for
 * a connection fails after `connectionTimeoutMillis` instead of hanging, so the API can
 * answer 503.
 */
import pg from "pg";
import type { Pool, PoolClient, QueryResult, QueryResultRow } from "pg";

/** Anything store modules can query: a Pool or a checked-out client. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/** One round trip (`SELECT 1`): resolves when the database answers. */
export async function ping(q: Queryable): Promise<void> {
  await q.query("SELECT 1");
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
  // A checked-out client that loses its connection between two queries (Postgres shutting
  // down, a network cut) emits "error" with no query to fail, and pg-pool only listens while
  // the client is idle: without a listener of its own that event would crash the process. The
  // failure still reaches the holder (its next query fails, not queryable) and the pool
  // discards the client on release.
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

/**
 * Runs `fn` in one transaction on a client of `pool`: COMMIT on success, ROLLBACK on throw.
 * With `selfBegin`, `fn` sends BEGIN itself (to pipeline it with its first statement and save a
 * round trip); with `selfCommit`, COMMIT too (with its last statement); the rollback and client
 * release stay here.
 */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>, opts: { selfBegin?: boolean; selfCommit?: boolean } = {}): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    if (!opts.selfBegin) await client.query("BEGIN");
    const out = await fn(client);
    if (!opts.selfCommit) await client.query("COMMIT");
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
