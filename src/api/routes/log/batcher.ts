/**
 * The in-process append batcher of `POST /v1/log/entries`: appends that arrive while a batch
 * is being written wait and are written together as the next batch, in ONE transaction under
 * ONE signed head. A lone append is written at once (no timer, no added latency); under load
 * the batch grows with the arrival rate, which is what lets the log sign a head per request
 * and still sustain thousands of appends per second.
 *
 * Promise: at most one batch of this process is being written at a time; requests are written
 * in arrival order; each caller gets its own entry and the head of its batch; a batch that
 * fails rejects every caller in it (nothing of it was committed) and the next batch still runs.
 * Writers in other processes are serialised by the log store's advisory lock.
 */
import type { LogEntry, TreeHead } from "../../../core/tlog/index.js";
import type { LogAppendInput, LogAppendResult } from "../../../store/log.js";

/** Writes one batch (in order) and returns what the store wrote. */
export type BatchWriter = (inputs: LogAppendInput[]) => Promise<LogAppendResult>;

/** What one caller gets back. */
export interface BatchedAppend {
  entry: LogEntry;
  head: TreeHead;
}

interface Waiting {
  input: LogAppendInput;
  resolve: (v: BatchedAppend) => void;
  reject: (e: unknown) => void;
}

/** Default cap on the entries of one batch. */
export const DEFAULT_MAX_BATCH = 500;

/** Queues appends and writes them in batches (see the module comment). */
export class AppendBatcher {
  private queue: Waiting[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly write: BatchWriter,
    private readonly maxBatch: number = DEFAULT_MAX_BATCH,
    private readonly onBatch?: (size: number) => void,
  ) {}

  /** Appends one entry; resolves once its batch is committed. */
  append(input: LogAppendInput): Promise<BatchedAppend> {
    return new Promise<BatchedAppend>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
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
        const batch = this.queue.splice(0, this.maxBatch);
        this.onBatch?.(batch.length);
        try {
          const out = await this.write(batch.map((w) => w.input));
          batch.forEach((w, i) => {
            const entry = out.entries[i];
            if (entry) w.resolve({ entry, head: out.head });
            else w.reject(new Error("the log store returned fewer entries than appended"));
          });
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      this.running = null;
    }
  }
}
