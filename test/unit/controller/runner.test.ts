/**
 * The runner's result handling and metrics (controller-runtime's names), its pause/resume, and
 * that one key is never reconciled by two workers at once.
 */
import { describe, expect, it } from "vitest";
import { createControllerMetrics } from "../../../src/controller/metrics.js";
import { silentLogger } from "../../../src/controller/log.js";
import { defaultRateLimiter } from "../../../src/controller/queue/rate-limiter.js";
import { WorkQueue } from "../../../src/controller/queue/work-queue.js";
import { ControllerRunner, TerminalError, type ReconcileResult } from "../../../src/controller/runner.js";
import { KubeApiError, isKubeError } from "../../../src/sources/kubernetes/errors.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const flush = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

function setup(reconcile: (key: string) => Promise<ReconcileResult | void>, workers = 1) {
  const clock = new FakeClock();
  const metrics = createControllerMetrics({ defaults: false });
  const queue: WorkQueue = new WorkQueue({ clock, rateLimiter: defaultRateLimiter(clock), metrics: metrics.queue("delegation", () => queue.unfinishedWork()) });
  const runner = new ControllerRunner({
    name: "delegation",
    queue,
    reconcile,
    workers,
    metrics,
    log: silentLogger,
    isConflict: (e) => isKubeError(e, "CONFLICT"),
  });
  const value = async (name: string, labels: string) => {
    const text = await metrics.registry.metrics();
    const m = text.match(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, "m"));
    return m ? Number(m[1]) : undefined;
  };
  return { clock, queue, runner, value };
}

describe("ControllerRunner", () => {
  it("counts results by controller-runtime's labels and requeues as asked", async () => {
    const outcomes: Record<string, () => Promise<ReconcileResult | void>> = {
      ok: async () => {},
      later: async () => ({ requeueAfterMs: 1000 }),
      again: async () => ({ requeue: true }),
      fail: async () => {
        throw new Error("db down");
      },
      conflict: async () => {
        throw new KubeApiError("CONFLICT", 409, "stale", "Conflict");
      },
    };
    const seen: string[] = [];
    const { clock, queue, runner, value } = setup(async (k) => {
      seen.push(k);
      return outcomes[k]?.();
    });
    expect(await value("controller_runtime_reconcile_errors_total", 'controller="delegation"')).toBe(0);
    for (const k of Object.keys(outcomes)) queue.add(k);
    runner.start();
    await flush();
    expect(seen).toEqual(["ok", "later", "again", "fail", "conflict"]);
    const total = (result: string) => value("controller_runtime_reconcile_total", `controller="delegation",result="${result}"`);
    expect(await total("success")).toBe(1);
    expect(await total("requeue_after")).toBe(1);
    expect(await total("requeue")).toBe(2); // requeue and the conflict
    expect(await total("error")).toBe(1);
    expect(await value("controller_runtime_reconcile_errors_total", 'controller="delegation"')).toBe(1);
    expect(await value("workqueue_retries_total", 'name="delegation"')).toBe(3);
    expect(await value("workqueue_adds_total", 'name="delegation"')).toBe(5);
    clock.advance(10); // the rate-limited ones (5 ms backoff) come back first
    await flush();
    expect(seen.slice(5).sort()).toEqual(["again", "conflict", "fail"]);
    clock.advance(1000);
    await flush();
    expect(seen.filter((k) => k === "later")).toHaveLength(2);
    await runner.stop();
  });

  it("never runs one key on two workers at once, and processes a change made meanwhile afterwards", async () => {
    let running = 0;
    let max = 0;
    let release: () => void = () => {};
    const calls: string[] = [];
    const { queue, runner } = setup(async (k) => {
      calls.push(k);
      running += 1;
      max = Math.max(max, running);
      if (calls.length === 1) await new Promise<void>((r) => (release = r));
      running -= 1;
    }, 4);
    runner.start();
    queue.add("a");
    await flush();
    queue.add("a");
    queue.add("a");
    await flush();
    expect(calls).toEqual(["a"]);
    release();
    await flush();
    expect(calls).toEqual(["a", "a"]);
    expect(max).toBe(1);
    await runner.stop();
  });

  it("pauses (keys stay queued) and resumes", async () => {
    const calls: string[] = [];
    const { queue, runner } = setup(async (k) => void calls.push(k), 2);
    runner.start();
    runner.pause();
    expect(runner.isActive()).toBe(false);
    queue.add("a");
    queue.add("b");
    await flush();
    expect(calls).toEqual([]);
    expect(queue.len()).toBe(2);
    runner.start();
    await flush();
    expect(calls.sort()).toEqual(["a", "b"]);
    await runner.stop();
  });

  it("counts panics and terminal errors, active workers and their maximum, and unfinished work (controller-runtime's names)", async () => {
    let release: () => void = () => {};
    const { clock, queue, runner, value } = setup(async (k) => {
      if (k === "bug") throw new TypeError("cannot read properties of undefined");
      if (k === "hopeless") throw new TerminalError("never valid");
      if (k === "slow") await new Promise<void>((r) => (release = r));
    }, 3);
    expect(await value("controller_runtime_max_concurrent_reconciles", 'controller="delegation"')).toBe(3);
    for (const k of ["bug", "hopeless", "slow"]) queue.add(k);
    runner.start();
    await flush();
    expect(await value("controller_runtime_reconcile_panics_total", 'controller="delegation"')).toBe(1);
    expect(await value("controller_runtime_terminal_reconcile_errors_total", 'controller="delegation"')).toBe(1);
    expect(await value("controller_runtime_reconcile_errors_total", 'controller="delegation"')).toBe(2);
    expect(await value("controller_runtime_active_workers", 'controller="delegation"')).toBe(1);
    clock.advance(4000); // the panic's retry (5 ms backoff) runs and fails again meanwhile
    await flush();
    expect(await value("workqueue_unfinished_work_seconds", 'name="delegation"')).toBe(4);
    expect(await value("workqueue_longest_running_processor_seconds", 'name="delegation"')).toBe(4);
    release();
    await flush();
    expect(await value("controller_runtime_active_workers", 'controller="delegation"')).toBe(0);
    expect(await value("workqueue_unfinished_work_seconds", 'name="delegation"')).toBe(0);
    // The terminal error is not retried; the panic is.
    expect(queue.numRequeues("hopeless")).toBe(0);
    expect(queue.numRequeues("bug")).toBe(2);
    await runner.stop();
  });
});
