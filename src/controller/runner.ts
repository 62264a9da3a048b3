/**
 * One controller: a work queue and its workers running a reconcile function, with
 * controller-runtime's result handling and metrics.
 *
 * For every key a worker takes: the reconcile runs; on success the key's backoff is forgotten;
 * `requeueAfterMs` queues it again after that delay (`requeue_after`); `requeue` queues it
 * through the rate limiter (`requeue`); a thrown error is retried through the rate limiter and
 * counted in `controller_runtime_reconcile_errors_total` (`error`), except a conflict (the
 * optimistic concurrency of the API server: HTTP 409 Conflict), which is retried without
 * counting as an error (`requeue`). A `TerminalError` is counted (an error, and
 * `controller_runtime_terminal_reconcile_errors_total`) but not retried: the key is forgotten.
 * A programming error (TypeError, RangeError, ReferenceError, SyntaxError) also counts in
 * `controller_runtime_reconcile_panics_total` and is retried like any error. One key is never
 * processed by two workers at once (the queue's promise).
 *
 * `pause()` (this replica lost the lease) lets the workers finish their current key and take no
 * new one; keys stay queued (a key taken while paused is put back) until `resume()`.
 */
import type { ControllerMetrics, ReconcileResultLabel } from "./metrics.js";
import { errorText, type Logger } from "./log.js";
import type { WorkQueue } from "./queue/work-queue.js";

/** An error that retrying cannot fix (controller-runtime's TerminalError): counted, not retried. */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
}

const PANICS = [TypeError, RangeError, ReferenceError, SyntaxError];

/** What a reconcile asks for. Nothing (or `{}`): done. */
export interface ReconcileResult {
  /** Queue the key again through the rate limiter. */
  requeue?: boolean;
  /** Queue the key again after this many ms (expiry, a dependency not ready yet). */
  requeueAfterMs?: number;
}

/** A reconcile function: the key is `namespace/name`. */
export type ReconcileFn = (key: string) => Promise<ReconcileResult | void>;

/** Options of a ControllerRunner. */
export interface RunnerOptions {
  /** The controller's name (the `controller` and queue `name` label). */
  name: string;
  queue: WorkQueue;
  reconcile: ReconcileFn;
  /** Number of workers (keys reconciled in parallel). */
  workers: number;
  metrics: ControllerMetrics;
  log: Logger;
  /** True for an error that is a conflict to retry quietly. */
  isConflict: (err: unknown) => boolean;
}

/** A controller's workers (see the module comment). */
export class ControllerRunner {
  private running: Promise<void>[] = [];
  private active = false;
  private opened: (() => void) | undefined;
  private gate: Promise<void> = new Promise((resolve) => (this.opened = resolve));

  constructor(private readonly opts: RunnerOptions) {
    opts.metrics.initController(opts.name, Math.max(1, opts.workers));
  }

  /** Starts (or resumes) processing. */
  start(): void {
    this.active = true;
    this.opened?.();
    if (this.running.length > 0) return;
    for (let i = 0; i < Math.max(1, this.opts.workers); i++) this.running.push(this.work());
  }

  /** Stops taking keys (the current ones finish); `start` resumes. */
  pause(): void {
    if (!this.active) return;
    this.active = false;
    this.gate = new Promise((resolve) => (this.opened = resolve));
  }

  /** True while processing. */
  isActive(): boolean {
    return this.active;
  }

  /** Shuts the queue down and waits for the workers to finish their current key. */
  async stop(): Promise<void> {
    this.opts.queue.shutDown();
    this.opened?.();
    await Promise.all(this.running);
  }

  private async work(): Promise<void> {
    const { queue, name, log } = this.opts;
    for (;;) {
      if (!this.active && !queue.isShuttingDown) await this.gate;
      const key = await queue.get();
      if (key === undefined) return;
      if (!this.active) {
        // Paused while waiting: put the key back for when processing resumes.
        queue.done(key);
        queue.add(key);
        continue;
      }
      const started = performance.now();
      let result: ReconcileResultLabel = "success";
      let kind: "panic" | "terminal" | undefined;
      this.opts.metrics.activeWorkers(name, 1);
      try {
        const r = (await this.opts.reconcile(key)) ?? {};
        if (r.requeueAfterMs !== undefined && r.requeueAfterMs > 0) {
          queue.forget(key);
          queue.addAfter(key, r.requeueAfterMs);
          result = "requeue_after";
        } else if (r.requeue) {
          queue.addRateLimited(key);
          result = "requeue";
        } else {
          queue.forget(key);
        }
      } catch (err) {
        if (err instanceof TerminalError) {
          queue.forget(key);
          result = "error";
          kind = "terminal";
          log.error("reconcile failed for good (not retried)", { controller: name, key, error: errorText(err) });
          continue;
        }
        queue.addRateLimited(key);
        if (PANICS.some((c) => err instanceof c)) kind = "panic";
        if (this.opts.isConflict(err)) {
          result = "requeue";
          log.debug("conflict; requeued", { controller: name, key, error: errorText(err) });
        } else {
          result = "error";
          log.error("reconcile failed", { controller: name, key, error: errorText(err), retries: queue.numRequeues(key) });
        }
      } finally {
        queue.done(key);
        this.opts.metrics.activeWorkers(name, -1);
        this.opts.metrics.reconciled(name, result, (performance.now() - started) / 1000, kind);
      }
    }
  }
}
