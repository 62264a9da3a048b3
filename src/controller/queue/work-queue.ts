/**
 * The controller's work queue: client-go's rate-limited delaying queue, in one class.
 *
 * Promises:
 * - Deduplication: a key is in the queue at most once, however often it is added before a
 *   worker takes it.
 * - No concurrent processing of one key: a key added while a worker processes it is held back
 *   ("dirty") and queued again only when that worker calls `done`.
 * - FIFO otherwise; a waiting worker gets a new key directly.
 * - `addAfter(key, ms)` adds the key when the delay has passed (the earliest of several pending
 *   delays wins); `addRateLimited(key)` delays by the rate limiter (per-item exponential and a
 *   global token bucket by default) and counts a retry; `forget(key)` resets its backoff.
 * - After `shutDown`, adds are ignored and `get` resolves `undefined`.
 *
 * Time comes from the injected `Clock`, so tests drive delays and backoff with a fake clock.
 */
import type { Clock, ClockTimer } from "../../core/time/index.js";
import { DelayHeap } from "./delay-heap.js";
import type { RateLimiter } from "./rate-limiter.js";

/** What the queue reports (workqueue_* metrics). Durations in seconds. */
export interface QueueMetrics {
  added(): void;
  depth(n: number): void;
  retried(): void;
  queueLatency(seconds: number): void;
  workDuration(seconds: number): void;
}

/** Options of a WorkQueue. */
export interface WorkQueueOptions {
  clock: Clock;
  rateLimiter: RateLimiter;
  metrics?: QueueMetrics;
}

/** The work queue (see the module comment). */
export class WorkQueue {
  private queue: string[] = [];
  private head = 0;
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  /** When each key being processed had been queued. */
  private readonly queuedAtOfProcessing = new Map<string, number>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly delayed = new DelayHeap();
  private readonly dueAt = new Map<string, number>();
  private timer: ClockTimer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly limiter: RateLimiter;
  private readonly metrics: QueueMetrics | undefined;

  constructor(opts: WorkQueueOptions) {
    this.clock = opts.clock;
    this.limiter = opts.rateLimiter;
    this.metrics = opts.metrics;
  }

  /** Keys waiting for a worker (not counting delayed or in-process ones). */
  len(): number {
    return this.queue.length - this.head;
  }

  /** Keys waiting for their delay. */
  delayedLen(): number {
    return this.dueAt.size;
  }

  /**
   * Epoch ms when the oldest key that is queued (not delayed) or being processed was queued;
   * undefined when there is none. Everything queued before it has been processed.
   */
  oldestPendingSince(): number | undefined {
    let oldest: number | undefined;
    for (const t of this.addedAt.values()) if (oldest === undefined || t < oldest) oldest = t;
    for (const t of this.queuedAtOfProcessing.values()) if (oldest === undefined || t < oldest) oldest = t;
    return oldest;
  }

  /** Seconds the keys being processed have been processing, and the longest of them (client-go's unfinished work). */
  unfinishedWork(): { totalSeconds: number; longestSeconds: number } {
    const now = this.clock.now();
    let total = 0;
    let longest = 0;
    for (const t of this.startedAt.values()) {
      const s = Math.max(0, now - t) / 1000;
      total += s;
      longest = Math.max(longest, s);
    }
    return { totalSeconds: total, longestSeconds: longest };
  }

  /** True while `key` is being processed. */
  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  /** Queues `key` (deduplicated; held back while it is processed). */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.metrics?.added();
    this.dirty.add(key);
    this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Queues `key` after `ms` (at once when `ms` <= 0). */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + ms;
    const pending = this.dueAt.get(key);
    if (pending !== undefined && pending <= at) return;
    this.dueAt.set(key, at);
    this.delayed.push({ key, at });
    this.arm();
  }

  /** Queues `key` after the rate limiter's delay, counting a retry. */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    this.metrics?.retried();
    this.addAfter(key, this.limiter.when(key));
  }

  /** Resets `key`'s backoff (it succeeded). */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  /** Retries of `key` since its last `forget`. */
  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }

  /** The next key to process; waits for one. `undefined` once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    if (this.len() > 0) {
      const key = this.queue[this.head] as string;
      this.head += 1;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.take(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` processed; a key added meanwhile is queued again now. */
  done(key: string): void {
    if (!this.processing.delete(key)) return;
    const started = this.startedAt.get(key);
    this.startedAt.delete(key);
    this.queuedAtOfProcessing.delete(key);
    if (started !== undefined) this.metrics?.workDuration((this.clock.now() - started) / 1000);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
  }

  /** Stops the queue: pending and future keys are dropped, waiting workers get `undefined`. */
  shutDown(): void {
    this.shuttingDown = true;
    this.timer?.cancel();
    this.timer = undefined;
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  private push(key: string): void {
    const w = this.waiters.shift();
    if (w) {
      this.take(key);
      w(key);
      return;
    }
    this.queue.push(key);
    this.metrics?.depth(this.len());
  }

  private take(key: string): void {
    const now = this.clock.now();
    this.processing.add(key);
    this.dirty.delete(key);
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.metrics?.queueLatency((now - added) / 1000);
    this.startedAt.set(key, now);
    this.queuedAtOfProcessing.set(key, added ?? now);
    this.metrics?.depth(this.len());
  }

  /** Sets the timer for the earliest live delayed entry. */
  private arm(): void {
    let top = this.delayed.peek();
    while (top && this.dueAt.get(top.key) !== top.at) {
      this.delayed.pop();
      top = this.delayed.peek();
    }
    if (!top) {
      this.timer?.cancel();
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      return;
    }
    if (this.timer && this.timerAt <= top.at) return;
    this.timer?.cancel();
    this.timerAt = top.at;
    this.timer = this.clock.setTimer(() => this.fire(), top.at - this.clock.now());
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (let top = this.delayed.peek(); top && top.at <= now; top = this.delayed.peek()) {
      this.delayed.pop();
      if (this.dueAt.get(top.key) !== top.at) continue;
      this.dueAt.delete(top.key);
      this.add(top.key);
    }
    if (!this.shuttingDown) this.arm();
  }
}
