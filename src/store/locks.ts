/**
 * Postgres advisory lock keys of Writ, in one place so no two uses collide.
 *
 * Every key is the two-int form `(WRIT_LOCK_NAMESPACE, id)`: the namespace is "writ" in ASCII.
 * Add a new id here for a new lock; never reuse one. Lock order (to avoid deadlocks): a
 * transaction that takes several takes them in increasing id order.
 */

/** The class id of all Writ advisory locks: 0x77726974, "writ". */
export const WRIT_LOCK_NAMESPACE = 0x77726974;

/** The object ids of Writ's advisory locks. */
export const LOCK_IDS = {
  /** Held (session-level) while migrations run. */
  migrations: 1,
  /** Held (transaction-level) while a revocation is sequenced, logged and announced. */
  revocations: 10,
  /** Shared by delegation upserts, exclusive for revocations, so a subtree cannot grow while it is revoked. */
  delegationTree: 15,
  /** Reserved for the transparency log's append path (taken after `revocations`). */
  transparencyLog: 20,
  /** Tried (transaction-level, never waited for) by each retention batch: one process prunes at a time. */
  retention: 30,
  /** Taken (transaction-level) on a Citus node while it makes its spend functions (sql/functions/writ_citus_local_fn.sql, which names it as (namespace, 40)). */
  citusShardFunctions: 40,
} as const;

/** SQL that takes the transaction-level lock `id` ($1 is the namespace, $2 the id). */
export const XACT_LOCK_SQL = "SELECT pg_advisory_xact_lock($1::int, $2::int)";
