import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { baseDelay, DEFAULT_RETRY_POLICY, nextRetryDelay, type RetryPolicy } from "../../../src/webhooks/backoff.js";

const policyArb = fc
  .record({ minMs: fc.integer({ min: 1, max: 100_000 }), spread: fc.integer({ min: 0, max: 10_000_000 }), maxAttempts: fc.integer({ min: 1, max: 50 }) })
  .map(({ minMs, spread, maxAttempts }): RetryPolicy => ({ minMs, maxMs: minMs + spread, maxAttempts }));

describe("retry schedule", () => {
  it("defaults: 1 s doubling to 10 min, 12 attempts", () => {
    const bases = Array.from({ length: 11 }, (_, i) => baseDelay(i + 1, DEFAULT_RETRY_POLICY));
    expect(bases).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000, 512000, 600000]);
    expect(nextRetryDelay(11, DEFAULT_RETRY_POLICY, () => 0.999)).toBeLessThanOrEqual(600_000);
    expect(nextRetryDelay(12, DEFAULT_RETRY_POLICY)).toBeNull();
  });

  it("a delay lies in [base/2, base], never above the cap, and none is left after maxAttempts", () => {
    fc.assert(
      fc.property(policyArb, fc.integer({ min: 1, max: 2000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (policy, n, r) => {
        const d = nextRetryDelay(n, policy, () => r);
        if (n >= policy.maxAttempts) return d === null;
        const base = baseDelay(n, policy);
        return d !== null && d >= Math.floor(base / 2) && d <= base && d <= policy.maxMs && Number.isFinite(d);
      }),
      { numRuns: 200 },
    );
  });

  it("base delays never decrease with more failures", () => {
    fc.assert(
      fc.property(policyArb, fc.integer({ min: 1, max: 2000 }), (policy, n) => baseDelay(n + 1, policy) >= baseDelay(n, policy)),
      { numRuns: 200 },
    );
  });

  it("jitter spreads retries (different random draws give different delays)", () => {
    const p: RetryPolicy = { minMs: 1000, maxMs: 60_000, maxAttempts: 10 };
    expect(nextRetryDelay(3, p, () => 0)).toBe(2000);
    expect(nextRetryDelay(3, p, () => 0.5)).toBe(3000);
  });
});
