/**
 * Group commit of ALLOWs: spends that arrive together share one spend transaction
 * (`recordAllowedSpends`, src/store/ledger/spend.ts). A batch starts gathering when a spend
 * waits and fewer than `inFlight` (2) batches are being written: it waits `waitMs` (1 ms) for
 * others to join, then takes up to `maxBatch` (64) waiting spends, in their order of arrival.
 * When every slot is busy, spends wait for the next free one, and go together. So under load
 * many ALLOWs share one transaction, one round trip of locks and reads, one of writes and one
 * WAL flush, and the batches grow with the load; alone, an ALLOW waits 1 ms and its own
 * transaction. Batches in flight together lock their rows in the same order (id order), so
 * they never deadlock one another; two that touch one agreement run one after the other.
 *
 * Promises:
 * - `record` resolves only once its spend's transaction COMMITTED (durably, with the server's
 *   `synchronous_commit`), with the spend's result: recorded (or replayed), or refused with its
 *   reason (its budget taken, possibly by an earlier spend of the same batch, which is decided
 *   as if that one had committed first). A refusal never fails the batch.
 * - The spends of a batch are applied in the order they arrived: two spends on one agreement
 *   in one batch are chained in that order (in two batches in flight together, in the order
 *   their transactions take the agreement's lock).
 * - One request's spend never fails another's (src/store/isolated-batch.ts): a malformed spend
 *   rejects alone (its SPEND_INVALID) without failing the transaction; when the transaction
 *   fails for any other reason than Postgres being unreachable (e.g. a value Postgres refuses,
 *   a deadlock with a revocation), nothing of it was written and its halves are retried apart,
 *   down to single spends, so every other spend is recorded and answered as usual and only the
 *   one that fails on its own rejects, with its own error. When Postgres cannot be reached (or
 *   the connection is lost, possibly after the COMMIT landed), every spend of the batch rejects
 *   with that error (the callers answer 503) and nothing is retried: a retry of the request by
 *   the client finds its entry, if it committed, and is answered the same ALLOW.
 * - A batch holds at most `maxBatch` spends; a spend waits `waitMs`, plus, when every slot is
 *   busy, until one is free and the spends before it have been taken.
 */
import type { Pool } from "pg";
import { writeIsolated, type PendingRow } from "../../store/isolated-batch.js";
import { recordAllowedSpends, type AllowedSpend, type SpendBatchResult, type SpendResult } from "../../store/ledger/index.js";

/** Largest batch by default (WRIT_SPEND_BATCH_MAX). */
export const DEFAULT_SPEND_BATCH_MAX = 64;
/** How long the first spend waits for others to join its batch, ms, by default (WRIT_SPEND_BATCH_WAIT_MS). */
export const DEFAULT_SPEND_BATCH_WAIT_MS = 1;
/** Most batches in flight at once by default (WRIT_SPEND_BATCHES_IN_FLIGHT). */
export const DEFAULT_SPEND_BATCHES_IN_FLIGHT = 2;

/** Options of SpendWriter. */
export interface SpendWriterOptions {
  maxBatch?: number;
  waitMs?: number;
  inFlight?: number;
  /** Receives each transaction's duration in seconds and its number of spends. */
  observe?: (seconds: number, size: number) => void;
}

type Waiting = PendingRow<AllowedSpend, SpendBatchResult>;

/** The group-committing writer of spends (see the module comment). */
export class SpendWriter {
  private queue: Waiting[] = [];
  /** Batches being written. */
  private running = 0;
  /** A batch is gathering (its first spend's wait has not ended). */
  private gathering = false;

  constructor(
    private readonly pool: Pool,
    private readonly opts: SpendWriterOptions = {},
  ) {}

  /** Records `spend` (see the module comment). Rejects with its own error (SPEND_INVALID, a database error). */
  record(spend: AllowedSpend): Promise<SpendResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item: spend, resolve: (r) => ("failed" in r ? reject(r.failed) : resolve(r)), reject });
      this.schedule();
    });
  }

  /** Starts gathering the next batch when a slot is free and none is gathering. */
  private schedule(): void {
    if (this.gathering || this.queue.length === 0 || this.running >= (this.opts.inFlight ?? DEFAULT_SPEND_BATCHES_IN_FLIGHT)) return;
    this.gathering = true;
    const wait = this.opts.waitMs ?? DEFAULT_SPEND_BATCH_WAIT_MS;
    const go = () => {
      this.gathering = false;
      void this.write(this.queue.splice(0, this.opts.maxBatch ?? DEFAULT_SPEND_BATCH_MAX));
    };
    if (wait > 0) setTimeout(go, wait);
    else setImmediate(go);
  }

  private async write(batch: Waiting[]): Promise<void> {
    this.running++;
    // The rest of the queue may start gathering in a free slot meanwhile.
    this.schedule();
    try {
      await writeIsolated(batch, (spends) => recordAllowedSpends(this.pool, spends, { observe: (s) => this.opts.observe?.(s, spends.length) }));
    } finally {
      this.running--;
      this.schedule();
    }
  }
}
