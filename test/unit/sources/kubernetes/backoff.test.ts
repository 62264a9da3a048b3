import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WATCH_BACKOFF, backoffDelay, randomBetween } from "../../../../src/sources/kubernetes/backoff.js";

describe("backoffDelay", () => {
  it("doubles from 800 ms to 30 s without jitter", () => {
    const p = { ...WATCH_BACKOFF, jitter: 0 };
    expect([1, 2, 3, 4, 5, 6, 7, 100].map((n) => backoffDelay(n, p))).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  });
  it("stays within [base * (1 - jitter), base] (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, r) => {
        const base = Math.min(30_000, 800 * 2 ** (n - 1));
        const d = backoffDelay(n, WATCH_BACKOFF, () => r);
        expect(d).toBeGreaterThanOrEqual(Math.floor(base * 0.5));
        expect(d).toBeLessThanOrEqual(base);
      }),
      { numRuns: 200 },
    );
  });
  it("picks watch timeouts within bounds", () => {
    expect(randomBetween(300, 600, () => 0)).toBe(300);
    expect(randomBetween(300, 600, () => 1)).toBe(600);
  });
});
