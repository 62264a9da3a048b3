import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ItemExponentialLimiter, defaultRateLimiter } from "../../../../src/controller/queue/rate-limiter.js";
import { WorkQueue, type QueueMetrics } from "../../../../src/controller/queue/work-queue.js";
import { FakeClock } from "../../../helpers/fake-clock.js";

function recorder() {
  const m = { adds: 0, retries: 0, depth: 0, latencies: [] as number[], works: [] as number[] };
  const sink: QueueMetrics = {
    added: () => void (m.adds += 1),
    retried: () => void (m.retries += 1),
    depth: (n) => void (m.depth = n),
    queueLatency: (s) => void m.latencies.push(s),
    workDuration: (s) => void m.works.push(s),
  };
  return { m, sink };
}

function queue(clock = new FakeClock()) {
  const { m, sink } = recorder();
  const q = new WorkQueue({ clock, rateLimiter: defaultRateLimiter(clock), metrics: sink });
  return { q, m, clock };
}

describe("WorkQueue", () => {
  it("deduplicates keys that are waiting, and hands them out first in, first out", async () => {
    const { q, m } = queue();
    q.add("a");
    q.add("b");
    q.add("a");
    expect(q.len()).toBe(2);
    expect(m.adds).toBe(2);
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("b");
    expect(q.len()).toBe(0);
  });

  it("never hands out a key being processed: a change meanwhile is queued again after done", async () => {
    const { q } = queue();
    q.add("a");
    expect(await q.get()).toBe("a");
    q.add("a");
    q.add("a");
    expect(q.len()).toBe(0);
    expect(q.isProcessing("a")).toBe(true);
    q.done("a");
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe("a");
    q.done("a");
    expect(q.len()).toBe(0);
  });

  it("gives a new key straight to a waiting worker and measures queue and work time", async () => {
    const { q, m, clock } = queue();
    const waiting = q.get();
    clock.advance(50);
    q.add("x");
    expect(await waiting).toBe("x");
    clock.advance(250);
    q.done("x");
    expect(m.latencies).toEqual([0]);
    expect(m.works).toEqual([0.25]);
    q.add("y");
    clock.advance(100);
    expect(await q.get()).toBe("y");
    expect(m.latencies.at(-1)).toBe(0.1);
  });

  it("adds a delayed key when its delay has passed; the earliest pending delay wins", () => {
    const { q, clock } = queue();
    q.addAfter("a", 500);
    q.addAfter("a", 100);
    q.addAfter("a", 300);
    q.addAfter("b", 0);
    expect(q.len()).toBe(1);
    expect(q.delayedLen()).toBe(1);
    clock.advance(99);
    expect(q.len()).toBe(1);
    clock.advance(1);
    expect(q.len()).toBe(2);
    expect(q.delayedLen()).toBe(0);
    clock.advance(1000);
    expect(q.len()).toBe(2);
    expect(clock.pending()).toBe(0);
  });

  it("retries with per-item exponential backoff and forgets it on success", async () => {
    const clock = new FakeClock();
    const { m, sink } = recorder();
    const q = new WorkQueue({ clock, rateLimiter: new ItemExponentialLimiter(5, 1000), metrics: sink });
    const fail = async () => {
      expect(await q.get()).toBe("k");
      q.addRateLimited("k");
      q.done("k");
    };
    q.add("k");
    await fail();
    expect(q.len()).toBe(0);
    clock.advance(5);
    expect(q.len()).toBe(1);
    await fail();
    clock.advance(9);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    expect(q.numRequeues("k")).toBe(2);
    expect(m.retries).toBe(2);
    await q.get();
    q.forget("k");
    q.done("k");
    expect(q.numRequeues("k")).toBe(0);
  });

  it("after shutDown, waiting and future gets resolve undefined and adds are ignored", async () => {
    const { q } = queue();
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
    q.add("a");
    q.addAfter("b", 10);
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
  });

  it("keeps its promises under any interleaving of adds, gets and dones (property)", async () => {
    type Op = { t: "add"; k: number } | { t: "get" } | { t: "done"; i: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ t: fc.constant("add" as const), k: fc.integer({ min: 0, max: 4 }) }),
      fc.record({ t: fc.constant("get" as const) }),
      fc.record({ t: fc.constant("done" as const), i: fc.integer({ min: 0, max: 10 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 80 }), async (ops) => {
        const { q } = queue();
        const processing: string[] = [];
        const owed = new Set<string>(); // added since it was last handed out: must be processed again
        for (const o of ops) {
          if (o.t === "add") {
            q.add(`k${o.k}`);
            owed.add(`k${o.k}`);
          } else if (o.t === "get" && q.len() > 0) {
            const k = (await q.get()) as string;
            expect(processing).not.toContain(k); // never two workers on one key
            processing.push(k);
            owed.delete(k);
          } else if (o.t === "done" && processing.length > 0) {
            const [k] = processing.splice(o.i % processing.length, 1);
            q.done(k as string);
          }
          // Deduplicated: at most one entry per key, and none for a key being processed.
          expect(q.len()).toBeLessThanOrEqual(5 - processing.length);
        }
        for (const k of processing.splice(0)) q.done(k);
        const drained = new Set<string>();
        while (q.len() > 0) {
          const k = (await q.get()) as string;
          expect(drained.has(k)).toBe(false);
          drained.add(k);
          q.done(k);
        }
        expect([...drained].sort()).toEqual([...owed].sort()); // nothing lost, nothing extra
      }),
      { numRuns: 150 },
    );
  });
});
