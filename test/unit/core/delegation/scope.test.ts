import { describe, expect, it } from "vitest";
import { MoneyError } from "../../../../src/core/money/index.js";
import { prepareScope, scopeWidenings } from "../../../../src/core/delegation/scope.js";
import type { Scope } from "../../../../src/core/delegation/types.js";

const parent: Scope = {
  currency: "USD",
  maximum_amount: 100,
  cumulative_maximum: 1000,
  action_types: ["purchase", "refund"],
  merchants: ["m1", "m2"],
  categories: ["books"],
  intents: ["i1", "i2"],
};

describe("prepareScope", () => {
  it("converts amounts to minor units and lists to sets", () => {
    const p = prepareScope({ ...parent, maximum_amount: 100.5, cumulative_maximum: 0.07 });
    expect(p.ceilingMinor).toBe(10050n);
    expect(p.cumulativeMinor).toBe(7n);
    expect(p.actionTypes).toEqual(new Set(["purchase", "refund"]));
    expect(p.merchants).toEqual(new Set(["m1", "m2"]));
    expect(p.categories).toEqual(new Set(["books"]));
    expect(p.intents).toEqual(new Set(["i1", "i2"]));
  });

  it("uses the currency's exponent (JPY 0, KWD 3)", () => {
    expect(prepareScope({ currency: "JPY", maximum_amount: 5000 }).ceilingMinor).toBe(5000n);
    expect(prepareScope({ currency: "KWD", maximum_amount: 1.234 }).ceilingMinor).toBe(1234n);
  });

  it("leaves absent lists unrestricted, an empty list allows nothing, empty intents bind all", () => {
    const p = prepareScope({ currency: "USD", merchants: [], intents: [] });
    expect(p.actionTypes).toBeUndefined();
    expect(p.merchants).toEqual(new Set());
    expect(p.intents).toBeUndefined();
    expect(p.ceilingMinor).toBeUndefined();
  });

  it("throws MoneyError for amounts the currency cannot carry and unknown currencies", () => {
    expect(() => prepareScope({ currency: "JPY", maximum_amount: 1.5 })).toThrow(MoneyError);
    expect(() => prepareScope({ currency: "USD", maximum_amount: -1 })).toThrow(MoneyError);
    expect(() => prepareScope({ currency: "XYZW" })).toThrow(MoneyError);
  });
});

describe("scopeWidenings", () => {
  it("accepts identical and narrower scopes", () => {
    expect(scopeWidenings(parent, parent)).toEqual([]);
    expect(
      scopeWidenings(parent, {
        currency: "USD",
        maximum_amount: 99.99,
        cumulative_maximum: 10,
        action_types: ["purchase"],
        merchants: [],
        categories: ["books"],
        intents: ["i2"],
      }),
    ).toEqual([]);
    expect(scopeWidenings({ currency: "USD" }, parent)).toEqual([]);
  });

  it("names every widened field in its own sentence", () => {
    const w = scopeWidenings(parent, {
      currency: "USD",
      maximum_amount: 500,
      action_types: ["purchase", "transfer"],
      categories: ["books"],
      intents: [],
    });
    expect(w).toEqual([
      "maximum_amount: 500.00 > 100.00 USD",
      "cumulative_maximum: absent while the parent's is 1000.00 USD",
      'action_types: "transfer" not in the parent\'s action_types',
      "merchants: absent while the parent restricts them",
      "intents: absent while the parent restricts them",
    ]);
  });

  it("compares money as minor units, exactly", () => {
    expect(scopeWidenings({ currency: "USD", maximum_amount: 0.3 }, { currency: "USD", maximum_amount: 0.1 + 0.2 })).toEqual([
      "maximum_amount: 0.30000000000000004 is not a valid amount in USD",
    ]);
    expect(scopeWidenings({ currency: "KWD", maximum_amount: 1.234 }, { currency: "KWD", maximum_amount: 1.235 })).toEqual([
      "maximum_amount: 1.235 > 1.234 KWD",
    ]);
    expect(scopeWidenings({ currency: "KWD", maximum_amount: 1.234 }, { currency: "KWD", maximum_amount: 1.233 })).toEqual([]);
  });

  it("reports a currency change and skips amount magnitudes across currencies", () => {
    expect(scopeWidenings({ currency: "USD", maximum_amount: 100 }, { currency: "EUR", maximum_amount: 1 })).toEqual([
      "currency: EUR differs from the parent's USD",
    ]);
  });

  it("reports a parent amount that cannot be read", () => {
    expect(scopeWidenings({ currency: "JPY", maximum_amount: 1.5 }, { currency: "JPY", maximum_amount: 1 })[0]).toMatch(/^maximum_amount: the parent's/);
  });

  it("lists at most five extra members", () => {
    const w = scopeWidenings({ currency: "USD", merchants: [] }, { currency: "USD", merchants: ["a", "b", "c", "d", "e", "f", "g"] });
    expect(w).toEqual(['merchants: "a", "b", "c", "d", "e" and 2 more not in the parent\'s merchants']);
  });

  it("period limits: a child keeps each of its parent's windows no looser, and may add its own", () => {
    const parent = {
      currency: "EUR",
      time_zone: "Europe/Berlin",
      period_limits: [
        { period: "day" as const, amount: 100 },
        { rolling: "PT24H", count: 5 },
      ],
    };
    expect(scopeWidenings(parent, { ...parent, period_limits: [...parent.period_limits, { period: "month" as const, amount: 1000 }] })).toEqual([]);
    expect(
      scopeWidenings(parent, {
        ...parent,
        period_limits: [
          { period: "day", amount: 50 },
          { rolling: "PT24H", count: 3, amount: 10 },
        ],
      }),
    ).toEqual([]);
    expect(scopeWidenings(parent, { currency: "EUR" })).toEqual(["period_limits: the parent's day in Europe/Berlin limit is absent"]);
    expect(scopeWidenings(parent, { ...parent, time_zone: "UTC" })).toEqual(["period_limits: the parent's day in Europe/Berlin limit is absent"]);
    expect(
      scopeWidenings(parent, {
        ...parent,
        period_limits: [
          { period: "day", amount: 100.01 },
          { rolling: "PT24H", count: 5 },
        ],
      }),
    ).toEqual(["period_limits: the day in Europe/Berlin amount 100.01 > 100.00 EUR"]);
    expect(
      scopeWidenings(parent, {
        ...parent,
        period_limits: [
          { period: "day", count: 1 },
          { rolling: "PT24H", count: 5 },
        ],
      }),
    ).toEqual(["period_limits: the day in Europe/Berlin limit has no amount while the parent's is 100.00 EUR"]);
    expect(
      scopeWidenings(parent, {
        ...parent,
        period_limits: [
          { period: "day", amount: 100 },
          { rolling: "PT24H", count: 6 },
        ],
      }),
    ).toEqual(["period_limits: the rolling PT24H count 6 > 5"]);
    expect(
      scopeWidenings(parent, {
        ...parent,
        period_limits: [
          { period: "day", amount: 100 },
          { rolling: "P1D", amount: 1 },
        ],
      }),
    ).toEqual(["period_limits: the rolling PT24H limit has no count while the parent's is 5"]);
  });
});
