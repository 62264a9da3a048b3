import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ItemExponentialLimiter, MaxOfLimiter, TokenBucketLimiter, defaultRateLimiter } from "../../../../src/controller/queue/rate-limiter.js";
import { FakeClock } from "../../../helpers/fake-clock.js";

describe("ItemExponentialLimiter", () => {
  it("doubles per failure from 5 ms and caps at 1000 s, per key", () => {
    const l = new ItemExponentialLimiter();
    const delays = Array.from({ length: 20 }, () => l.when("a"));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(delays.at(-1)).toBe(1_000_000);
    expect(Math.max(...delays)).toBe(1_000_000);
    expect(l.when("b")).toBe(5);
    expect(l.numRequeues("a")).toBe(20);
  });

  it("forget resets a key", () => {
    const l = new ItemExponentialLimiter(5, 1000);
    l.when("a");
    l.when("a");
    l.forget("a");
    expect(l.numRequeues("a")).toBe(0);
    expect(l.when("a")).toBe(5);
  });

  it("never exceeds the cap nor goes below the base (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 100, max: 100_000 }), fc.integer({ min: 1, max: 200 }), (base, max, n) => {
        const l = new ItemExponentialLimiter(base, max);
        for (let i = 0; i < n; i++) {
          const d = l.when("k");
          expect(d).toBeGreaterThanOrEqual(Math.min(base, max));
          expect(d).toBeLessThanOrEqual(max);
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe("TokenBucketLimiter", () => {
  it("lets a burst through at once, then spaces retries at qps, and refills with time", () => {
    const clock = new FakeClock();
    const b = new TokenBucketLimiter(10, 100, clock);
    const first = Array.from({ length: 100 }, () => b.when());
    expect(first.every((d) => d === 0)).toBe(true);
    expect(b.when()).toBe(100);
    expect(b.when()).toBe(200);
    clock.advance(10_000);
    expect(b.when()).toBe(0);
  });

  it("refuses a bucket without tokens", () => {
    expect(() => new TokenBucketLimiter(0, 1, new FakeClock())).toThrow(RangeError);
  });
});

describe("the default limiter", () => {
  it("is the max of per-item backoff and the shared bucket", () => {
    const clock = new FakeClock();
    const l = defaultRateLimiter(clock, { baseDelayMs: 5, maxDelayMs: 1_000_000, qps: 1, burst: 2 });
    expect(l.when("a")).toBe(5);
    expect(l.when("b")).toBe(5);
    // The bucket is empty now: the third retry waits for its token (1 s at 1 qps).
    expect(l.when("c")).toBe(1000);
    l.forget("a");
    expect(l.numRequeues("a")).toBe(0);
    expect(l.numRequeues("b")).toBe(1);
    expect(new MaxOfLimiter().when("x")).toBe(0);
  });
});
