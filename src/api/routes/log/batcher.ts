/**
 * The group commit of `POST /v1/log/entries`, on the store's one queue
 * (src/store/group-commit.ts): appends that arrive while a batch is being written wait and are
 * written together as the next batch, in ONE transaction under ONE signed head. A lone append
 * is written within the tick it arrived in (no timer, no added latency); under load the batch
 * grows with the arrival rate, which is what lets the log sign a head per request and still
 * sustain thousands of appends per second.
 *
 * Promise: at most one batch of this process is being written at a time; requests are written
 * in arrival order; each caller gets its own entry and the head of the transaction that wrote
 * it. One caller's entry never fails another's: when a batch's transaction fails for a reason
 * other than Postgres being unreachable (an entry that cannot be built, a row Postgres
 * refuses), nothing of it was committed and its halves are written apart, in order, each in
 * its own transaction under its own signed head, down to single entries; only an entry that
 * fails on its own rejects, with its own error. When Postgres cannot be reached, every caller
 * of the batch rejects with that error (503). The next batch still runs. Writers in other
 * processes are serialised by the log store's advisory lock.
 */
import type { LogEntry, TreeHead } from "../../../core/tlog/index.js";
import { GroupCommitQueue, type LogAppendInput, type LogAppendResult } from "../../../store/index.js";

/** Writes one batch (in order, one transaction) and returns what the store wrote; throws only when nothing of it was committed. */
export type BatchWriter = (inputs: LogAppendInput[]) => Promise<LogAppendResult>;

/** What one caller gets back. */
export interface BatchedAppend {
  entry: LogEntry;
  head: TreeHead;
}

/** The log's queue of appends. */
export type AppendQueue = GroupCommitQueue<LogAppendInput, BatchedAppend>;

/** Default cap on the entries of one batch. */
export const DEFAULT_MAX_BATCH = 500;

/** The log's queue of appends (see the module comment); `onBatch` is told the size of every batch written (one signed head each). */
export function appendQueue(write: BatchWriter, maxBatch: number = DEFAULT_MAX_BATCH, onBatch?: (size: number) => void): AppendQueue {
  return new GroupCommitQueue(
    async (inputs) => {
      const out = await write(inputs);
      onBatch?.(out.entries.length);
      return out.entries.map((entry) => ({ entry, head: out.head }));
    },
    { maxBatch, wait: "microtask", window: "idle", inFlight: 1 },
  );
}
