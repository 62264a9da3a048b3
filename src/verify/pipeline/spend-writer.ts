/**
 * Group commit of ALLOWs: spends that arrive together share one spend transaction
 * (`recordAllowedSpends`, src/store/ledger/spend.ts). At most one batch is in flight per
 * process; spends that arrive meanwhile wait and go together in the next one. The first spend
 * that finds no batch in flight waits `waitMs` (1 ms) for others to join. So under load many
 * ALLOWs share one transaction, one round trip of locks and reads, one of writes and one WAL
 * flush; alone, an ALLOW waits 1 ms and its own transaction.
 *
 * Promises:
 * - `record` resolves only once its spend's transaction COMMITTED (durably, with the server's
 *   `synchronous_commit`), with the spend's result: recorded (or replayed), or refused with its
 *   reason (its budget taken, possibly by an earlier spend of the same batch, which is decided
 *   as if that one had committed first). A refusal never fails the batch.
 * - The spends of a batch are applied in the order they arrived: two spends on one agreement
 *   are chained in that order.
 * - One request's spend never fails another's (src/store/isolated-batch.ts): a malformed spend
 *   rejects alone (its SPEND_INVALID) without failing the transaction; when the transaction
 *   fails for any other reason than Postgres being unreachable (e.g. a value Postgres refuses,
 *   a deadlock with a revocation), nothing of it was written and its halves are retried apart,
 *   down to single spends, so every other spend is recorded and answered as usual and only the
 *   one that fails on its own rejects, with its own error. When Postgres cannot be reached (or
 *   the connection is lost, possibly after the COMMIT landed), every spend of the batch rejects
 *   with that error (the callers answer 503) and nothing is retried: a retry of the request by
 *   the client finds its entry, if it committed, and is answered the same ALLOW.
 * - A batch holds at most `maxBatch` (64) spends; a spend waits at most `waitMs` plus the batch
 *   in flight before its own batch starts.
 */
import type { Pool } from "pg";
import { writeIsolated, type PendingRow } from "../../store/isolated-batch.js";
import { recordAllowedSpends, type AllowedSpend, type SpendBatchResult, type SpendResult } from "../../store/ledger/index.js";

/** Largest batch by default (WRIT_SPEND_BATCH_MAX). */
export const DEFAULT_SPEND_BATCH_MAX = 64;
/** How long the first spend waits for others to join its batch, ms, by default (WRIT_SPEND_BATCH_WAIT_MS). */
export const DEFAULT_SPEND_BATCH_WAIT_MS = 1;

/** Options of SpendWriter. */
export interface SpendWriterOptions {
  maxBatch?: number;
  waitMs?: number;
  /** Receives each transaction's duration in seconds and its number of spends. */
  observe?: (seconds: number, size: number) => void;
}

type Waiting = PendingRow<AllowedSpend, SpendBatchResult>;

/** The group-committing writer of spends (see the module comment). */
export class SpendWriter {
  private queue: Waiting[] = [];
  private flushing = false;

  constructor(
    private readonly pool: Pool,
    private readonly opts: SpendWriterOptions = {},
  ) {}

  /** Records `spend` (see the module comment). Rejects with its own error (SPEND_INVALID, a database error). */
  record(spend: AllowedSpend): Promise<SpendResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item: spend, resolve: (r) => ("failed" in r ? reject(r.failed) : resolve(r)), reject });
      if (!this.flushing) {
        this.flushing = true;
        const wait = this.opts.waitMs ?? DEFAULT_SPEND_BATCH_WAIT_MS;
        if (wait > 0) setTimeout(() => void this.flush(), wait);
        else setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const max = this.opts.maxBatch ?? DEFAULT_SPEND_BATCH_MAX;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, max);
      await writeIsolated(batch, (spends) => recordAllowedSpends(this.pool, spends, { observe: (s) => this.opts.observe?.(s, spends.length) }));
    }
    this.flushing = false;
  }
}
