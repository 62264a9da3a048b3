import { describe, expect, it } from "vitest";
import { validateCondition } from "../../../../src/core/delegation/conditions.js";
import { evaluateCondition, evaluateConditions } from "../../../../src/core/evaluate/delegation-conditions.js";
import type { Condition } from "../../../../src/core/delegation/types.js";
import { DEFAULT_POLICY, NO_REVOCATIONS, type Action, type EvalContext } from "../../../../src/core/evaluate/types.js";

function ctx(nowIso: string, extra: Partial<EvalContext> = {}): EvalContext {
  return { now: Date.parse(nowIso), policy: DEFAULT_POLICY, revocations: NO_REVOCATIONS, ...extra };
}

const action: Action = {
  action_id: "a1",
  action_type: "purchase",
  amount: 10,
  currency: "EUR",
  // Deliberately inside every window: conditions must use ctx.now, not proposed_at.
  proposed_at: "2026-07-01T23:30:00+02:00",
  merchant: "m1",
};

const night: Condition = { type: "time_window", start: "22:00", end: "06:00", timezone: "Europe/Berlin" };
const day: Condition = { type: "time_window", start: "09:00", end: "17:00", timezone: "Europe/Berlin" };

describe("validateCondition", () => {
  it("accepts well-formed conditions", () => {
    for (const c of [
      night,
      { type: "time_window", start: "00:00", end: "23:59", timezone: "UTC" },
      { type: "business_hours_only", timezone: "America/New_York" },
      { type: "max_risk_score", value: 0 },
      { type: "max_risk_score", value: 100 },
      { type: "merchant_allowlist", merchants: ["m1"] },
      { type: "principal_present" },
    ]) {
      expect(validateCondition(c), JSON.stringify(c)).toBeUndefined();
    }
  });

  it("says what is wrong with malformed ones", () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ type: "time_window", start: "24:00", end: "06:00", timezone: "UTC" }, /start "24:00"/],
      [{ type: "time_window", start: "22:00", end: "6:00", timezone: "UTC" }, /end "6:00"/],
      [{ type: "time_window", start: "22:00", end: "22:00", timezone: "UTC" }, /empty/],
      [{ type: "time_window", start: "22:00", end: "06:00", timezone: "Europe/Atlantis" }, /not an IANA time zone/],
      [{ type: "business_hours_only", timezone: "+01:00" }, /not an IANA time zone/],
      [{ type: "business_hours_only" }, /not an IANA time zone/],
      [{ type: "max_risk_score", value: 101 }, /0 to 100/],
      [{ type: "max_risk_score", value: -1 }, /0 to 100/],
      [{ type: "max_risk_score", value: "50" }, /0 to 100/],
      [{ type: "max_risk_score", value: Number.NaN }, /0 to 100/],
      [{ type: "merchant_allowlist", merchants: [] }, /non-empty array/],
      [{ type: "merchant_allowlist", merchants: ["m1", ""] }, /non-empty strings/],
      [{ type: "merchant_allowlist", merchants: "m1" }, /non-empty array/],
      [{ type: "weekend_only" }, /unknown condition type "weekend_only"/],
      [null, /object/],
      [["time_window"], /object/],
    ];
    for (const [c, re] of cases) expect(validateCondition(c), JSON.stringify(c)).toMatch(re);
  });
});

describe("time_window", () => {
  it("allows times inside a midnight-crossing window, start inclusive, end exclusive", () => {
    // Berlin is UTC+2 in July.
    for (const local of ["22:00", "23:30", "00:00", "05:59"]) {
      const [h, m] = local.split(":").map(Number) as [number, number];
      const now = Date.UTC(2026, 6, 1, h - 2, m);
      expect(evaluateCondition(night, action, { ...ctx("2026-07-01T00:00:00Z"), now }), local).toBeUndefined();
    }
  });

  it("fires OUTSIDE_TIME_WINDOW with a concrete message, using ctx.now", () => {
    expect(evaluateConditions([night], action, ctx("2026-07-01T12:05:00Z"))).toEqual([
      { code: "OUTSIDE_TIME_WINDOW", message: "14:05 in Europe/Berlin is outside 22:00-06:00" },
    ]);
    expect(evaluateCondition(night, action, ctx("2026-07-01T04:00:00Z"))?.message).toBe("06:00 in Europe/Berlin is outside 22:00-06:00");
    expect(evaluateCondition(night, action, ctx("2026-07-01T19:59:00Z"))?.code).toBe("OUTSIDE_TIME_WINDOW");
  });

  it("handles ordinary windows", () => {
    expect(evaluateCondition(day, action, ctx("2026-07-01T07:00:00Z"))).toBeUndefined(); // 09:00
    expect(evaluateCondition(day, action, ctx("2026-07-01T15:00:00Z"))?.code).toBe("OUTSIDE_TIME_WINDOW"); // 17:00
    expect(evaluateCondition(day, action, ctx("2026-07-01T06:59:00Z"))?.code).toBe("OUTSIDE_TIME_WINDOW"); // 08:59
  });

  it("follows the zone across a DST change", () => {
    // 2026-03-29: Berlin moves from +01:00 to +02:00 at 01:00Z.
    expect(evaluateCondition(day, action, ctx("2026-03-28T08:30:00Z"))).toBeUndefined(); // Saturday 09:30 +01:00
    expect(evaluateCondition(day, action, ctx("2026-03-29T07:30:00Z"))).toBeUndefined(); // 09:30 +02:00
    expect(evaluateCondition(day, action, ctx("2026-03-29T06:30:00Z"))?.message).toBe("08:30 in Europe/Berlin is outside 09:00-17:00");
  });

  it("handles 30- and 45-minute zones", () => {
    const kolkata: Condition = { type: "time_window", start: "09:00", end: "09:30", timezone: "Asia/Kolkata" };
    expect(evaluateCondition(kolkata, action, ctx("2026-07-01T03:30:00Z"))).toBeUndefined(); // 09:00
    expect(evaluateCondition(kolkata, action, ctx("2026-07-01T04:00:00Z"))?.message).toBe("09:30 in Asia/Kolkata is outside 09:00-09:30");
    const kathmandu: Condition = { type: "time_window", start: "09:00", end: "09:15", timezone: "Asia/Kathmandu" };
    expect(evaluateCondition(kathmandu, action, ctx("2026-07-01T03:15:00Z"))).toBeUndefined(); // 09:00
    expect(evaluateCondition(kathmandu, action, ctx("2026-07-01T03:14:00Z"))?.message).toBe("08:59 in Asia/Kathmandu is outside 09:00-09:15");
  });

  it("fails closed on a malformed window or zone", () => {
    const bad = { type: "time_window", start: "22:00", end: "06:00", timezone: "Nowhere/City" } as Condition;
    expect(evaluateCondition(bad, action, ctx("2026-07-01T23:00:00Z"))?.code).toBe("OUTSIDE_TIME_WINDOW");
    const badTime = { type: "time_window", start: "25:00", end: "06:00", timezone: "UTC" } as Condition;
    expect(evaluateCondition(badTime, action, ctx("2026-07-01T01:00:00Z"))?.code).toBe("OUTSIDE_TIME_WINDOW");
  });
});

describe("business_hours_only", () => {
  const ny: Condition = { type: "business_hours_only", timezone: "America/New_York" };

  it("holds Monday to Friday 09:00-17:00 local", () => {
    expect(evaluateCondition(ny, action, ctx("2026-07-01T13:00:00Z"))).toBeUndefined(); // Wednesday 09:00 EDT
    expect(evaluateCondition(ny, action, ctx("2026-07-03T20:59:00Z"))).toBeUndefined(); // Friday 16:59
  });

  it("fires OUTSIDE_BUSINESS_HOURS on weekends, early and late", () => {
    expect(evaluateCondition(ny, action, ctx("2026-07-04T15:00:00Z"))).toEqual({
      code: "OUTSIDE_BUSINESS_HOURS",
      message: "Saturday 11:00 in America/New_York is outside business hours (Monday-Friday 09:00-17:00)",
    });
    expect(evaluateCondition(ny, action, ctx("2026-07-01T21:00:00Z"))?.code).toBe("OUTSIDE_BUSINESS_HOURS"); // 17:00
    expect(evaluateCondition(ny, action, ctx("2026-07-01T12:59:00Z"))?.code).toBe("OUTSIDE_BUSINESS_HOURS"); // 08:59
    // Monday 02:00Z is still Sunday evening in New York.
    expect(evaluateCondition(ny, action, ctx("2026-07-06T02:00:00Z"))?.message).toMatch(/^Sunday 22:00/);
  });

  it("fails closed on an unknown zone", () => {
    const bad = { type: "business_hours_only", timezone: "Nowhere" } as Condition;
    expect(evaluateCondition(bad, action, ctx("2026-07-01T13:00:00Z"))?.code).toBe("OUTSIDE_BUSINESS_HOURS");
  });
});

describe("max_risk_score", () => {
  const c: Condition = { type: "max_risk_score", value: 50 };

  it("holds at or below the limit", () => {
    expect(evaluateCondition(c, action, ctx("2026-07-01T00:00:00Z", { riskScore: 50 }))).toBeUndefined();
    expect(evaluateCondition(c, action, ctx("2026-07-01T00:00:00Z", { riskScore: 0 }))).toBeUndefined();
  });

  it("fires RISK_SCORE_ABOVE_LIMIT above it", () => {
    expect(evaluateCondition(c, action, ctx("2026-07-01T00:00:00Z", { riskScore: 50.5 }))).toEqual({
      code: "RISK_SCORE_ABOVE_LIMIT",
      message: "risk score 50.5 is above the limit 50",
    });
  });

  it("fires RISK_SCORE_UNKNOWN without a score (fail closed)", () => {
    expect(evaluateCondition(c, action, ctx("2026-07-01T00:00:00Z"))?.code).toBe("RISK_SCORE_UNKNOWN");
    expect(evaluateCondition(c, action, ctx("2026-07-01T00:00:00Z", { riskScore: Number.NaN }))?.code).toBe("RISK_SCORE_UNKNOWN");
  });

  it("cannot be satisfied when its value is not a number", () => {
    const bad = { type: "max_risk_score", value: "90" } as unknown as Condition;
    expect(evaluateCondition(bad, action, ctx("2026-07-01T00:00:00Z", { riskScore: 1 }))?.code).toBe("RISK_SCORE_ABOVE_LIMIT");
  });
});

describe("merchant_allowlist", () => {
  const c: Condition = { type: "merchant_allowlist", merchants: ["m1", "m2"] };
  const now = ctx("2026-07-01T00:00:00Z");

  it("holds for a listed merchant", () => {
    expect(evaluateCondition(c, action, now)).toBeUndefined();
  });

  it("fires MERCHANT_NOT_ALLOWED for an unlisted or absent merchant", () => {
    expect(evaluateCondition(c, { ...action, merchant: "m3" }, now)).toEqual({
      code: "MERCHANT_NOT_ALLOWED",
      message: 'merchant "m3" is not on the merchant allowlist',
    });
    expect(evaluateCondition(c, { ...action, merchant: undefined }, now)?.code).toBe("MERCHANT_NOT_ALLOWED");
    expect(evaluateCondition(c, { ...action, merchant: "" }, now)?.code).toBe("MERCHANT_NOT_ALLOWED");
    expect(evaluateCondition(c, undefined, now)?.code).toBe("MERCHANT_NOT_ALLOWED");
  });

  it("works for large lists", () => {
    const big: Condition = { type: "merchant_allowlist", merchants: Array.from({ length: 500 }, (_, i) => `m${i}`) };
    expect(evaluateCondition(big, { ...action, merchant: "m499" }, now)).toBeUndefined();
    expect(evaluateCondition(big, { ...action, merchant: "m500" }, now)?.code).toBe("MERCHANT_NOT_ALLOWED");
  });
});

describe("principal_present", () => {
  const c: Condition = { type: "principal_present" };
  it("holds only when ctx.principalPresent is true", () => {
    expect(evaluateCondition(c, action, ctx("2026-07-01T00:00:00Z", { principalPresent: true }))).toBeUndefined();
    expect(evaluateCondition(c, action, ctx("2026-07-01T00:00:00Z", { principalPresent: false }))?.code).toBe("PRINCIPAL_NOT_PRESENT");
    expect(evaluateCondition(c, action, ctx("2026-07-01T00:00:00Z"))?.code).toBe("PRINCIPAL_NOT_PRESENT");
  });
});

describe("principal_present above an amount or for categories (human present / not present)", () => {
  const above: Condition = { type: "principal_present", above_amount: 20, currency: "EUR" };
  const cats: Condition = { type: "principal_present", categories: ["travel"] };
  const at = ctx("2026-07-01T00:00:00Z");
  it("needs the principal only above the amount, in its currency (another currency always)", () => {
    expect(evaluateCondition(above, { ...action, amount: 20 }, at)).toBeUndefined();
    expect(evaluateCondition(above, { ...action, amount: 20.01 }, at)).toEqual({
      code: "PRINCIPAL_NOT_PRESENT",
      message: "principal_present holds for an amount above 20 EUR and the principal is not known to be present",
    });
    expect(evaluateCondition(above, { ...action, amount: 5, currency: "USD" }, at)?.code).toBe("PRINCIPAL_NOT_PRESENT");
    expect(evaluateCondition(above, { ...action, amount: 50 }, ctx("2026-07-01T00:00:00Z", { principalPresent: true }))).toBeUndefined();
  });
  it("needs the principal only for the named categories (an action without one always)", () => {
    expect(evaluateCondition(cats, { ...action, category: "groceries" }, at)).toBeUndefined();
    expect(evaluateCondition(cats, { ...action, category: "travel" }, at)?.message).toContain('for category "travel"');
    expect(evaluateCondition(cats, action, at)?.message).toContain("for an action without a category");
  });
  it("validates its members", () => {
    expect(validateCondition(above)).toBeUndefined();
    expect(validateCondition(cats)).toBeUndefined();
    expect(validateCondition({ type: "principal_present", above_amount: 20 })).toBe("principal_present above_amount and currency go together");
    expect(validateCondition({ type: "principal_present", above_amount: -1, currency: "EUR" })).toMatch(/above_amount -1 is not a number/);
    expect(validateCondition({ type: "principal_present", categories: [] })).toMatch(/categories must be a non-empty array/);
    expect(validateCondition({ type: "principal_present", above_amount: 1, currency: "eur" })).toMatch(/currency "eur"/);
  });
});

describe("evaluateConditions", () => {
  it("is empty when every condition holds", () => {
    expect(evaluateConditions([night, { type: "max_risk_score", value: 10 }], action, ctx("2026-07-01T21:00:00Z", { riskScore: 3 }))).toEqual([]);
    expect(evaluateConditions([], action, ctx("2026-07-01T21:00:00Z"))).toEqual([]);
  });

  it("reports every failing condition", () => {
    const out = evaluateConditions([day, { type: "principal_present" }, { type: "merchant_allowlist", merchants: ["x"] }], action, ctx("2026-07-01T21:00:00Z"));
    expect(out.map((f) => f.code)).toEqual(["OUTSIDE_TIME_WINDOW", "PRINCIPAL_NOT_PRESENT", "MERCHANT_NOT_ALLOWED"]);
  });

  it("suspends on conditions it cannot evaluate (unknown type, not an object)", () => {
    const out = evaluateConditions([{ type: "moon_phase" } as unknown as Condition, null as unknown as Condition], action, ctx("2026-07-01T21:00:00Z"));
    expect(out.map((f) => f.code)).toEqual(["CONDITION_INVALID", "CONDITION_INVALID"]);
    expect(out[0]?.message).toMatch(/unknown type "moon_phase"/);
  });
});
