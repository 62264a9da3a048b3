/**
 * The one group-commit queue of the process: callers add rows one at a time, and rows that
 * arrive together are written together (one statement, or one transaction). The spends of
 * verify ALLOWs (src/verify/commit/queues.ts), the stored refusals of verify, and the
 * transparency log's appends (src/api/routes/log) all go through it, each with its own bounds.
 *
 * How a batch forms:
 * - Gather window: a batch starts gathering when a row waits, a slot is free and no batch is
 *   gathering; it waits `wait` (ms: a timer, 0: the next turn of the event loop, "microtask":
 *   only what is queued in the same tick) for others to join, then takes the waiting rows in
 *   arrival order. With `window: "idle"`, only a batch that starts from an idle queue waits:
 *   rows that queued while every slot was busy are taken at once when a slot frees (they have
 *   waited already); with `window: "every"` every batch waits its window.
 * - Slots in flight: at most `inFlight` batches are being written at once.
 * - At most `maxBatch` rows per batch.
 * - Key de-duplication (`key`): two rows with one key never share a batch; the later stays
 *   queued, in order, for a later batch (which then sees the first written).
 * - Lanes (`group`): rows of different groups are queued apart, each group a lane of its own
 *   with its own gather window and its own batches (on a Citus cluster: one lane per worker, so
 *   each batch is one worker's and a worker's transactions never wait for another's to end).
 *   Each lane has `laneInFlight` slots (default `inFlight`); a row without a group is the
 *   queue's own, with its `inFlight` slots. A lane is dropped once it is idle.
 * - Failing rows isolated (./isolated-batch.ts, `writeIsolated`): a batch whose write fails
 *   for another reason than Postgres being unreachable is written again in halves, down to
 *   single rows, so only the row that fails on its own rejects; when Postgres is unreachable
 *   every row of the batch rejects with that error and nothing is retried.
 *
 * Promise: `add` resolves with the row's value once the write that held it returned (for a
 * transaction: committed), or rejects with the error of the write it failed alone in (or of
 * an unreachable Postgres). `drain` resolves once nothing is queued or being written.
 */
import { writeIsolated, type PendingRow, type RowsWriter } from "./isolated-batch.js";

/** Bounds of a GroupCommitQueue (see the module comment). */
export interface GroupCommitOptions<I> {
  /** Most rows per batch. */
  maxBatch: number;
  /** How long a batch gathers: ms (0: the next turn of the event loop), or "microtask" (the current tick only). */
  wait: number | "microtask";
  /** Which batches wait their window: "every" one, or only one that starts from an "idle" queue. */
  window: "every" | "idle";
  /** Most batches being written at once. */
  inFlight: number;
  /** Rows of one key never share a batch. */
  key?: (item: I) => string;
  /**
   * The lane of a row (see the module comment), undefined: none (the queue's own rows). Read
   * as the row is added, so it may change while the queue runs (a row queued stays in its lane).
   */
  group?: (item: I) => string | undefined;
  /** Most batches of one lane being written at once (default `inFlight`). */
  laneInFlight?: number;
}

/** The queue (see the module comment). */
export class GroupCommitQueue<I, R> {
  private queue: PendingRow<I, R>[] = [];
  /** Batches being written. */
  private running = 0;
  /** A batch is gathering (its window has not ended). */
  private gathering = false;
  private idleWaiters: (() => void)[] = [];
  /** With `group`: the lanes that have rows queued or being written, by group. */
  private readonly lanes = new Map<string, GroupCommitQueue<I, R>>();

  constructor(
    private readonly write: RowsWriter<I, R>,
    private readonly opts: GroupCommitOptions<I>,
  ) {
    if (!Number.isSafeInteger(opts.maxBatch) || opts.maxBatch < 1) throw new RangeError("maxBatch must be a whole number at or above 1");
    if (!Number.isSafeInteger(opts.inFlight) || opts.inFlight < 1) throw new RangeError("inFlight must be a whole number at or above 1");
    if (opts.laneInFlight !== undefined && (!Number.isSafeInteger(opts.laneInFlight) || opts.laneInFlight < 1))
      throw new RangeError("laneInFlight must be a whole number at or above 1");
  }

  /** Rows waiting for a batch. */
  get waiting(): number {
    let n = this.queue.length;
    for (const l of this.lanes.values()) n += l.waiting;
    return n;
  }

  /** Batches being written now (in every lane). */
  get inFlight(): number {
    let n = this.running;
    for (const l of this.lanes.values()) n += l.inFlight;
    return n;
  }

  /** Queues `item`; resolves with its value once its batch is written (see the module comment). */
  add(item: I): Promise<R> {
    const g = this.opts.group?.(item);
    if (g !== undefined) {
      let lane = this.lanes.get(g);
      if (!lane) {
        const { group: _, laneInFlight, ...rest } = this.opts;
        const created = new GroupCommitQueue(this.write, { ...rest, inFlight: laneInFlight ?? rest.inFlight });
        created.idleWaiters.push(() => this.laneIdle(g, created));
        this.lanes.set(g, created);
        lane = created;
      }
      return lane.add(item);
    }
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule(false);
    });
  }

  /** Resolves once nothing is queued or being written. */
  drain(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private idle(): boolean {
    return this.queue.length === 0 && this.running === 0 && !this.gathering && this.lanes.size === 0;
  }

  /** Lane `g` has nothing queued or being written: dropped, and the queue's drains resolve once no lane is left. */
  private laneIdle(g: string, lane: GroupCommitQueue<I, R>): void {
    if (this.lanes.get(g) === lane) this.lanes.delete(g);
    if (this.idle()) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Starts the next batch when a slot is free and none is gathering; `slotFreed`: called as a batch ended. */
  private schedule(slotFreed: boolean): void {
    if (this.gathering || this.queue.length === 0 || this.running >= this.opts.inFlight) return;
    if (slotFreed && this.opts.window === "idle") {
      void this.run(this.take());
      return;
    }
    this.gathering = true;
    const go = () => {
      this.gathering = false;
      void this.run(this.take());
    };
    const wait = this.opts.wait;
    if (wait === "microtask") queueMicrotask(go);
    else if (wait > 0) setTimeout(go, wait);
    else setImmediate(go);
  }

  /** The next batch: up to maxBatch waiting rows in order, one per key. */
  private take(): PendingRow<I, R>[] {
    const { key, maxBatch } = this.opts;
    if (!key) return this.queue.splice(0, maxBatch);
    const batch: PendingRow<I, R>[] = [];
    const rest: PendingRow<I, R>[] = [];
    const keys = new Set<string>();
    for (const row of this.queue) {
      const k = key(row.item);
      if (batch.length >= maxBatch || keys.has(k)) rest.push(row);
      else {
        keys.add(k);
        batch.push(row);
      }
    }
    this.queue = rest;
    return batch;
  }

  private async run(batch: PendingRow<I, R>[]): Promise<void> {
    this.running++;
    // The rest of the queue may start gathering in a free slot meanwhile.
    this.schedule(false);
    try {
      await writeIsolated(batch, this.write);
    } finally {
      this.running--;
      this.schedule(true);
      if (this.idle()) for (const w of this.idleWaiters.splice(0)) w();
    }
  }
}
