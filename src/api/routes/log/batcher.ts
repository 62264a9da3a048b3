/**
 * The in-process append batcher of `POST /v1/log/entries`: appends that arrive while a batch
 * is being written wait and are written together as the next batch, in ONE transaction under
 * ONE signed head. A lone append is written at once (no timer, no added latency); under load
 * the batch grows with the arrival rate, which is what lets the log sign a head per request
 * and still sustain thousands of appends per second.
 *
 * Promise: at most one batch of this process is being written at a time; requests are written
 * in arrival order; each caller gets its own entry and the head of the transaction that wrote
 * it. One caller's entry never fails another's (src/store/isolated-batch.ts): when a batch's
 * transaction fails for a reason other than Postgres being unreachable (an entry that cannot
 * be built, a row Postgres refuses), nothing of it was committed and its halves are written
 * apart, in order, each in its own transaction under its own signed head, down to single
 * entries; only an entry that fails on its own rejects, with its own error. When Postgres
 * cannot be reached, every caller of the batch rejects with that error (503). The next batch
 * still runs. Writers in other processes are serialised by the log store's advisory lock.
 */
import type { LogEntry, TreeHead } from "../../../core/tlog/index.js";
import { writeIsolated, type PendingRow } from "../../../store/isolated-batch.js";
import type { LogAppendInput, LogAppendResult } from "../../../store/log.js";

/** Writes one batch (in order, one transaction) and returns what the store wrote; throws only when nothing of it was committed. */
export type BatchWriter = (inputs: LogAppendInput[]) => Promise<LogAppendResult>;

/** What one caller gets back. */
export interface BatchedAppend {
  entry: LogEntry;
  head: TreeHead;
}

/** Default cap on the entries of one batch. */
export const DEFAULT_MAX_BATCH = 500;

/** Queues appends and writes them in batches (see the module comment). */
export class AppendBatcher {
  private queue: PendingRow<LogAppendInput, BatchedAppend>[] = [];
  private running: Promise<void> | null = null;

  /** `onBatch` is told the size of every batch written (one signed head each). */
  constructor(
    private readonly write: BatchWriter,
    private readonly maxBatch: number = DEFAULT_MAX_BATCH,
    private readonly onBatch?: (size: number) => void,
  ) {}

  /** Appends one entry; resolves once its batch is committed. */
  append(input: LogAppendInput): Promise<BatchedAppend> {
    return new Promise<BatchedAppend>((resolve, reject) => {
      this.queue.push({ item: input, resolve, reject });
      this.running ??= this.run();
    });
  }

  /** Resolves when nothing is queued or being written. */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    // Yield once so that everything already arriving in this tick joins the first batch.
    await Promise.resolve();
    try {
      while (this.queue.length > 0) {
        await writeIsolated(this.queue.splice(0, this.maxBatch), async (inputs) => {
          const out = await this.write(inputs);
          this.onBatch?.(out.entries.length);
          return out.entries.map((entry) => ({ entry, head: out.head }));
        });
      }
    } finally {
      this.running = null;
    }
  }
}
