/**
 * The two group commits of verify, both on the store's one queue (src/store/group-commit.ts):
 *
 * - Spends of ALLOWs (`spendQueue`): spends that arrive together share one spend transaction
 *   (`recordAllowedSpends`, src/store/ledger/spend.ts). Up to `inFlight` (2) batches are
 *   written at once; every batch gathers `waitMs` (1 ms) after its slot is free, then takes up
 *   to `maxBatch` (64) waiting spends in their order of arrival. Under load many ALLOWs share
 *   one transaction, one round trip of locks and reads, one of writes and one WAL flush;
 *   alone, an ALLOW waits 1 ms and its own transaction. Batches in flight together lock their
 *   rows in the same order (id order), so they never deadlock one another; two that touch one
 *   agreement run one after the other. On a Citus cluster each worker's spends are queued
 *   apart, in a lane of their own (src/store/group-commit.ts) with one batch in flight
 *   (CITUS_SPEND_BATCHES_IN_FLIGHT, whatever `inFlight` is; measured: docs/scale.md):
 *   the spends of the agents whose shards that worker holds (`citusNodeOf`; an agent whose
 *   worker is not known yet, a lane of its own), so each transaction is on one worker
 *   (docs/scale.md) and a worker never waits for another's transactions to end; a worker's
 *   transaction is sent to that worker itself (`CitusDirect`, WRIT_CITUS_DIRECT, on by
 *   default), not through the coordinator, except a sub-agent's spend (its ancestors may be
 *   another worker's) and an agent whose worker is not known yet. A spend
 *   resolves only once its transaction COMMITTED (durably, with the server's
 *   `synchronous_commit`), with its result: recorded (or
 *   replayed), or refused with its reason (its budget taken, possibly by an earlier spend of
 *   the same batch, decided as if that one had committed first). The spends of a batch are
 *   applied in arrival order. A malformed spend rejects alone (its SPEND_INVALID).
 * - Refusals (`refusalQueue`): decisions that are not ALLOWs, one batch in flight, the first
 *   batch from an idle queue gathering 1 ms and the next taken as soon as the previous is
 *   written, up to 500 per statement (`saveRefusalDecisions`: committed without waiting for
 *   the WAL flush, docs/verify.md "Durability"); two decisions of one (agent, action) never
 *   share a batch (the later finds the first stored). A save resolves `stored`, or with the
 *   decision another request stored first.
 *
 * Either way one request's row never fails another's: a row Postgres refuses on its own (a
 * data exception, answered 400) rejects alone; an unreachable Postgres rejects the whole
 * batch (503) and nothing is retried: a retry of the request by the client finds its entry,
 * if it committed, and is answered the same.
 */
import type { Pool } from "pg";
import {
  GroupCommitQueue,
  recordAllowedSpends,
  type AllowedSpend,
  type SpendBatchResult,
  type SpendResult,
  decisionKey,
  saveRefusalDecisions,
  citusFlag,
  citusNodeOf,
  CitusDirect,
  citusDirectFromEnv,
  type NewVerifyDecision,
  type SavedRefusal,
} from "../../store/index.js";

/** Largest spend batch by default (WRIT_SPEND_BATCH_MAX). */
export const DEFAULT_SPEND_BATCH_MAX = 64;
/** How long a spend batch gathers, ms, by default (WRIT_SPEND_BATCH_WAIT_MS). */
export const DEFAULT_SPEND_BATCH_WAIT_MS = 1;
/** Most spend batches in flight at once by default (WRIT_SPEND_BATCHES_IN_FLIGHT). */
export const DEFAULT_SPEND_BATCHES_IN_FLIGHT = 2;
/** On a Citus cluster, most spend batches of one worker in flight at once (per process). */
export const CITUS_SPEND_BATCHES_IN_FLIGHT = 1;
/** Largest refusal batch. */
export const REFUSAL_BATCH_MAX = 500;
/** How long the first refusal from an idle queue waits for others, ms. */
export const REFUSAL_GATHER_MS = 1;

/** The spends' queue. */
export type SpendQueue = GroupCommitQueue<AllowedSpend, SpendBatchResult>;
/** The refusals' queue. */
export type RefusalQueue = GroupCommitQueue<NewVerifyDecision, SavedRefusal>;

/** Options of `spendQueue`. */
export interface SpendQueueOptions {
  maxBatch?: number;
  waitMs?: number;
  inFlight?: number;
  /** Receives each transaction's duration in seconds and its number of spends. */
  observe?: (seconds: number, size: number) => void;
  /** Whether each transaction holds one worker's spends only (a Citus cluster); default: once the database is found to be Citus. */
  perAgent?: () => boolean;
  /** On a Citus cluster, the group of an agent's spends (default `citusNodeOf`: its worker). */
  nodeOf?: (agent: string) => string;
  /**
   * On a Citus cluster, send each worker's spend transaction to that worker itself (its pool
   * from `direct`), not through the coordinator (default: WRIT_CITUS_DIRECT, on).
   */
  direct?: boolean | Pick<CitusDirect, "poolFor" | "failed" | "end">;
  /** WRIT_PERIOD_HOUR_COUNTERS_FROM (default: the store's HOUR_COUNTERS_FROM). */
  hourCountersFrom?: number;
}

/** The spends' queue, and the worker pools it opened (ended by `close`). */
export type SpendQueueWithPools = SpendQueue & { close(): Promise<void> };

/** The group commit of ALLOWs' spends (see the module comment). */
export function spendQueue(pool: Pool, opts: SpendQueueOptions = {}): SpendQueueWithPools {
  const perAgent = opts.perAgent ?? citusFlag(pool);
  const nodeOf = opts.nodeOf ?? citusNodeOf(pool);
  const on = opts.direct ?? citusDirectFromEnv(process.env) === "on";
  const direct = typeof on === "object" ? on : on ? new CitusDirect(pool) : undefined;
  const agentOf = (s: AllowedSpend) => s.agentId ?? s.decision?.agentId;
  const write = async (spends: AllowedSpend[]) => {
    const first = spends[0];
    // A sub-agent's spend (its ancestors may be another worker's) stays the coordinator's.
    const oneWorker = !spends.some((s) => (s.limits?.chain?.ancestorIds.length ?? 0) > 0);
    const agent = direct && first && oneWorker && perAgent() ? agentOf(first) : undefined;
    const worker = agent === undefined ? undefined : direct?.poolFor(nodeOf(agent));
    const observe = {
      observe: (s: number) => opts.observe?.(s, spends.length),
      ...(opts.hourCountersFrom !== undefined ? { hourCountersFrom: opts.hourCountersFrom } : {}),
    };
    if (!worker) return recordAllowedSpends(pool, spends, observe);
    try {
      return await recordAllowedSpends(worker, spends, observe);
    } catch (e) {
      direct?.failed();
      throw e;
    }
  };
  const queue = new GroupCommitQueue(write, {
    maxBatch: opts.maxBatch ?? DEFAULT_SPEND_BATCH_MAX,
    wait: opts.waitMs ?? DEFAULT_SPEND_BATCH_WAIT_MS,
    window: "every",
    inFlight: opts.inFlight ?? DEFAULT_SPEND_BATCHES_IN_FLIGHT,
    // On a Citus cluster, a lane per worker with one batch in flight each (see the module comment).
    group: (s) => {
      const agent = perAgent() ? agentOf(s) : undefined;
      return agent === undefined ? undefined : nodeOf(agent);
    },
    laneInFlight: CITUS_SPEND_BATCHES_IN_FLIGHT,
  });
  return Object.assign(queue, { close: async () => direct?.end() });
}

/** Records `spend` through `queue`: its result, or a rejection with its own error (SPEND_INVALID, a database error). */
export async function recordSpend(queue: Pick<SpendQueue, "add">, spend: AllowedSpend): Promise<SpendResult> {
  const r = await queue.add(spend);
  if ("failed" in r) throw r.failed;
  return r;
}

/** The group commit of refusals (see the module comment). */
export function refusalQueue(pool: Pool, opts: { maxBatch?: number; gatherMs?: number } = {}): RefusalQueue {
  return new GroupCommitQueue((ds) => saveRefusalDecisions(pool, ds), {
    maxBatch: opts.maxBatch ?? REFUSAL_BATCH_MAX,
    wait: opts.gatherMs ?? REFUSAL_GATHER_MS,
    window: "idle",
    inFlight: 1,
    key: (d) => decisionKey(d.agentId, d.actionId),
  });
}
