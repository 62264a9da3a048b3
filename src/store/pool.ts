/**
 * The Postgres connection pool of a process and the small query interface store modules take.
 *
 * Promise: a pool from `createPool` never crashes the process when a connection dies, idle
 * (the error is reported to `onError` and the connection discarded) or checked out (the
 * holder's next query fails; the connection is discarded on release), and a query waiting for
 * a connection fails after `connectionTimeoutMillis` instead of hanging, so the API can
 * answer 503.
 *
 * A multi-host DATABASE_URL (./cluster-url.ts) makes a pool of a replicated Postgres: each new
 * connection goes to the host that is the wanted kind of server now (./cluster.ts), a
 * connection that failed as "database unavailable" (./db-errors.ts: refused, ended, or a write
 * refused by a server that turned standby) is discarded, never reused, and a new connection
 * that found its remembered host gone or demoted is made once more after a fresh probe, so the
 * first request after a failover does not fail for a host the resolver could not yet know about.
 */
import pg from "pg";
import type { Pool, PoolClient, QueryResult, QueryResultRow } from "pg";
import { connectionConfig, resolverFor } from "./cluster.js";
import { isDbUnavailable } from "./db-errors.js";

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
  /**
   * `synchronous_commit` of every session of the pool (WRIT_SYNCHRONOUS_COMMIT), e.g.
   * `remote_apply`: a commit returns once the synchronous standbys have applied it. Unset: the
   * server's setting.
   */
  synchronousCommit?: SynchronousCommit;
}

/** The `synchronous_commit` levels a pool may ask for (the server refuses any other). */
export const SYNCHRONOUS_COMMIT_LEVELS = ["remote_apply", "on", "remote_write", "local", "off"] as const;
/** One of SYNCHRONOUS_COMMIT_LEVELS. */
export type SynchronousCommit = (typeof SYNCHRONOUS_COMMIT_LEVELS)[number];

/**
 * WRIT_SYNCHRONOUS_COMMIT of `env` (the data plane and the controller read it alike): a level,
 * or null when unset; an unknown value is listed in `problems` and null returned (the server's
 * setting then applies).
 */
export function loadSynchronousCommit(env: Readonly<Record<string, string | undefined>>, problems: string[]): SynchronousCommit | null {
  const raw = env.WRIT_SYNCHRONOUS_COMMIT?.trim();
  if (!raw) return null;
  if ((SYNCHRONOUS_COMMIT_LEVELS as readonly string[]).includes(raw)) return raw as SynchronousCommit;
  problems.push(`WRIT_SYNCHRONOUS_COMMIT must be one of ${SYNCHRONOUS_COMMIT_LEVELS.join(", ")}; using the server's setting`);
  return null;
}

type ConnectCallback = (err: Error | undefined, client: PoolClient | undefined, done: (release?: unknown) => void) => void;

/**
 * pg's Pool, but `connect` is made once more when it failed for a host the resolver remembered
 * and has since forgotten (see the module comment). Only for cluster URLs.
 */
function retryingPool(base: pg.PoolConfig, url: string): Pool {
  const resolver = resolverFor(url);
  if (!resolver) return new pg.Pool(base);
  class ClusterPool extends pg.Pool {
    override connect(): Promise<PoolClient>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<PoolClient> | void {
      const once = (): Promise<PoolClient> => super.connect();
      const hadHost = resolver?.remembered !== undefined;
      const p = once().catch((e: unknown) => {
        if (hadHost && resolver?.remembered === undefined && isDbUnavailable(e)) return once();
        throw e;
      });
      if (!callback) return p;
      p.then(
        (c) => callback(undefined, c, (release) => c.release(release as Error | boolean | undefined)),
        (e: unknown) => callback(e instanceof Error ? e : new Error(String(e)), undefined, () => {}),
      );
    }
  }
  return new ClusterPool(base);
}

/** A pool for `databaseUrl`. The caller ends it (`pool.end()`). */
export function createPool(databaseUrl: string, opts: PoolOptions = {}): Pool {
  const pool = retryingPool(
    {
      ...connectionConfig(databaseUrl),
      max: opts.max ?? 10,
      connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 5000,
      idleTimeoutMillis: 30_000,
      application_name: opts.applicationName ?? "writ",
      ...(opts.synchronousCommit ? { options: `-c synchronous_commit=${opts.synchronousCommit}` } : {}),
    },
    databaseUrl,
  );
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
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  opts: { selfBegin?: boolean; selfCommit?: boolean } = {},
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    if (!opts.selfBegin) await client.query("BEGIN");
    const out = await fn(client);
    if (!opts.selfCommit) await client.query("COMMIT");
    return out;
  } catch (e) {
    // A connection that failed as "unavailable" (ended, or its server turned standby) is not reused.
    broken = isDbUnavailable(e);
    if (!broken) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
    }
    throw e;
  } finally {
    // A client whose ROLLBACK failed is in an unknown state: destroy it rather than reuse it.
    client.release(broken);
  }
}
