/**
 * The database plugin: decorates `pool` (a pg Pool when DATABASE_URL is set, else null) and
 * `requireDb()`, the guard every storage-backed route calls first.
 *
 * Promise: `requireDb()` returns the pool, or throws the 503 `{error: "DATABASE_URL is not
 * set"}` when storage is not configured, or the 503 `{error: "database unavailable"}` while
 * the schema is not yet migrated (`writ serve` migrates in the background at start-up and
 * calls `markSchemaReady()` when done). A pool the app created is closed when the app closes.
 * `requireReadDb()` does the same for the read routes a standby can answer (log entries, tree
 * heads and proofs, the revocation list): the DATABASE_READ_URL pool when set, else `pool`;
 * those routes keep answering while no primary is reachable.
 */
import fp from "fastify-plugin";
import type { Pool } from "pg";
import { ApiError } from "../errors.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The pg pool, or null when DATABASE_URL is not set. */
    readonly pool: Pool | null;
    /** The pool, or throws the 503 the spec names (see src/api/plugins/db.ts). */
    requireDb(): Pool;
    /** The pool of the read routes a standby can answer (DATABASE_READ_URL, else `requireDb()`'s). */
    requireReadDb(): Pool;
    /** True once the schema is migrated (always true when the app was given a ready pool). */
    schemaReady(): boolean;
    /** Opens storage-backed routes after start-up migrations. */
    markSchemaReady(): void;
  }
}

/** Options of the db plugin. */
export interface DbPluginOptions {
  pool: Pool | null;
  /** Close the pool when the app closes. */
  ownsPool: boolean;
  /** The read routes' pool (default: `pool`). */
  readPool?: Pool | null;
  /** Close the read pool when the app closes. */
  ownsReadPool?: boolean;
  /** Whether the schema is already migrated. */
  schemaReady: boolean;
}

export default fp<DbPluginOptions>(
  async (app, opts) => {
    const pool = opts.pool;
    let ready = opts.schemaReady;
    const notSet = new ApiError("DATABASE_NOT_CONFIGURED");
    app.decorate("pool", pool);
    app.decorate("schemaReady", () => ready);
    app.decorate("markSchemaReady", () => {
      ready = true;
    });
    const guard = (p: Pool | null): Pool => {
      if (p === null) throw notSet;
      if (!ready) throw new ApiError("DATABASE_UNAVAILABLE");
      return p;
    };
    const readPool = opts.readPool === undefined ? pool : opts.readPool;
    app.decorate("requireDb", () => guard(pool));
    app.decorate("requireReadDb", () => guard(readPool));
    if (pool && opts.ownsPool) app.addHook("onClose", async () => pool.end());
    if (readPool && readPool !== pool && opts.ownsReadPool) app.addHook("onClose", async () => readPool.end());
  },
  { name: "writ-db" },
);
