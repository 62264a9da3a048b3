import { describe, expect, it } from "vitest";
import { conditionNarrows, conditionWidenings } from "../../../../src/core/delegation/condition-narrowing.js";
import type { Condition } from "../../../../src/core/delegation/types.js";

const tw = (start: string, end: string, timezone = "Europe/Berlin"): Condition => ({ type: "time_window", start, end, timezone });

describe("conditionNarrows", () => {
  it("keeps a principal_present child at least as strict as its parent (a lower threshold, more categories, or always)", () => {
    const above = (n: number, currency = "USD"): Condition => ({ type: "principal_present", above_amount: n, currency });
    expect(conditionNarrows(above(50), above(20))).toBe(true);
    expect(conditionNarrows(above(50), { type: "principal_present" })).toBe(true);
    expect(conditionNarrows(above(20), above(50))).toBe(false);
    expect(conditionNarrows(above(20), above(10, "EUR"))).toBe(false);
    expect(conditionNarrows({ type: "principal_present" }, above(0))).toBe(false);
    expect(conditionNarrows({ type: "principal_present", categories: ["travel"] }, { type: "principal_present", categories: ["travel", "gifts"] })).toBe(true);
    expect(conditionNarrows({ type: "principal_present", categories: ["travel", "gifts"] }, { type: "principal_present", categories: ["travel"] })).toBe(false);
  });

  it("accepts a time window inside its parent, including across midnight", () => {
    expect(conditionNarrows(tw("22:00", "06:00"), tw("22:00", "06:00"))).toBe(true);
    expect(conditionNarrows(tw("22:00", "06:00"), tw("23:00", "01:00"))).toBe(true);
    expect(conditionNarrows(tw("22:00", "06:00"), tw("01:00", "05:00"))).toBe(true);
    expect(conditionNarrows(tw("22:00", "06:00"), tw("22:30", "23:30"))).toBe(true);
    expect(conditionNarrows(tw("09:00", "17:00"), tw("10:00", "12:00"))).toBe(true);
  });

  it("refuses a time window that reaches outside, or in another zone", () => {
    expect(conditionNarrows(tw("22:00", "06:00"), tw("21:59", "06:00"))).toBe(false);
    expect(conditionNarrows(tw("22:00", "06:00"), tw("22:00", "06:01"))).toBe(false);
    expect(conditionNarrows(tw("22:00", "06:00"), tw("05:00", "23:00"))).toBe(false);
    expect(conditionNarrows(tw("09:00", "17:00"), tw("16:00", "10:00"))).toBe(false);
    expect(conditionNarrows(tw("09:00", "17:00"), tw("10:00", "12:00", "Europe/Paris"))).toBe(false);
  });

  it("compares risk limits, allowlists, business hours and presence", () => {
    expect(conditionNarrows({ type: "max_risk_score", value: 50 }, { type: "max_risk_score", value: 40 })).toBe(true);
    expect(conditionNarrows({ type: "max_risk_score", value: 50 }, { type: "max_risk_score", value: 51 })).toBe(false);
    expect(conditionNarrows({ type: "merchant_allowlist", merchants: ["a", "b"] }, { type: "merchant_allowlist", merchants: ["b"] })).toBe(true);
    expect(conditionNarrows({ type: "merchant_allowlist", merchants: ["a", "b"] }, { type: "merchant_allowlist", merchants: ["b", "c"] })).toBe(false);
    expect(conditionNarrows({ type: "business_hours_only", timezone: "UTC" }, { type: "business_hours_only", timezone: "UTC" })).toBe(true);
    expect(conditionNarrows({ type: "business_hours_only", timezone: "UTC" }, { type: "business_hours_only", timezone: "Asia/Tokyo" })).toBe(false);
    expect(conditionNarrows({ type: "principal_present" }, { type: "principal_present" })).toBe(true);
    expect(conditionNarrows({ type: "principal_present" }, { type: "max_risk_score", value: 0 })).toBe(false);
  });
});

describe("conditionWidenings", () => {
  it("is empty when every parent condition is kept or narrowed (extra child conditions are fine)", () => {
    const parent: Condition[] = [tw("22:00", "06:00"), { type: "max_risk_score", value: 50 }, { type: "principal_present" }];
    const child: Condition[] = [
      { type: "principal_present" },
      { type: "max_risk_score", value: 20 },
      tw("23:00", "02:00"),
      { type: "business_hours_only", timezone: "UTC" },
    ];
    expect(conditionWidenings(parent, child)).toEqual([]);
    expect(conditionWidenings(undefined, child)).toEqual([]);
    expect(conditionWidenings([], [])).toEqual([]);
  });

  it("names dropped and widened conditions", () => {
    const parent: Condition[] = [tw("22:00", "06:00"), { type: "max_risk_score", value: 50 }, { type: "business_hours_only", timezone: "UTC" }];
    const child: Condition[] = [tw("20:00", "06:00"), { type: "max_risk_score", value: 80 }];
    expect(conditionWidenings(parent, child)).toEqual([
      "conditions: widens time_window 22:00-06:00 Europe/Berlin (the child has time_window 20:00-06:00 Europe/Berlin)",
      "conditions: widens max_risk_score 50 (the child has max_risk_score 80)",
      "conditions: drops business_hours_only UTC",
    ]);
    expect(conditionWidenings([{ type: "principal_present" }], undefined)).toEqual(["conditions: drops principal_present"]);
  });

  it("refuses to narrow a parent whose conditions are not a list", () => {
    expect(conditionWidenings("x" as unknown as Condition[], [])).toHaveLength(1);
  });
});
