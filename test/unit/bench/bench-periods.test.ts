/**
 * BENCH_PERIODS of `npm run bench:verify` (hack/bench/verify/seed.ts): which period limits the
 * seeded agreements get, and a clear refusal of a value the bench does not know (rather than a
 * run measured without the limits the caller asked for).
 */
import { describe, expect, it } from "vitest";
import { BENCH_DELEGATION_PERIODS, BENCH_INTENT_PERIODS, BENCH_ROLLING_PERIODS, benchPeriodsFromEnv } from "../../../hack/bench/verify/seed.js";

describe("BENCH_PERIODS", () => {
  it("is none when unset, empty or 0; all for 1; intent and rolling as written; refuses anything else naming the variable", () => {
    expect(benchPeriodsFromEnv({})).toBeUndefined();
    expect(benchPeriodsFromEnv({ BENCH_PERIODS: "" })).toBeUndefined();
    expect(benchPeriodsFromEnv({ BENCH_PERIODS: "0" })).toBeUndefined();
    expect(benchPeriodsFromEnv({ BENCH_PERIODS: "1" })).toBe("all");
    expect(benchPeriodsFromEnv({ BENCH_PERIODS: " intent " })).toBe("intent");
    expect(benchPeriodsFromEnv({ BENCH_PERIODS: "rolling" })).toBe("rolling");
    expect(() => benchPeriodsFromEnv({ BENCH_PERIODS: "yes" })).toThrow('BENCH_PERIODS must be 1, intent, rolling or 0, not "yes"');
  });

  it("seeds for rolling exactly the intent's rolling window of the full set, and the full set a delegation week", () => {
    const rolling = BENCH_INTENT_PERIODS.period_limits.filter((l) => "rolling" in l);
    expect(BENCH_ROLLING_PERIODS.period_limits).toEqual(rolling);
    expect(BENCH_ROLLING_PERIODS.time_zone).toBe(BENCH_INTENT_PERIODS.time_zone);
    expect(BENCH_DELEGATION_PERIODS.period_limits.map((l) => l.period)).toEqual(["week"]);
  });
});
