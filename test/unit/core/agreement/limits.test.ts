import { describe, expect, it } from "vitest";
import { parentLimitsProblem } from "../../../../src/core/agreement/limits.js";
import type { IntentAgreement, Mandate, ParentLimits } from "../../../../src/core/agreement/types.js";

function m(intent_id: string, fields: Partial<Mandate> = {}): Mandate {
  return { intent_id, principal: { type: "human", id: "p" }, agent: { agent_id: "a" }, currency: "USD", ...fields };
}

function agreement(mandates: Mandate[], parent_limits?: ParentLimits): IntentAgreement {
  return {
    agreement_id: "agr",
    status: "active",
    mandates,
    ...(parent_limits ? { parent_limits } : {}),
    ledger: [],
    ledger_sequence: 0,
    ledger_as_of: "2025-01-01T00:00:00Z",
    events: [],
  };
}

const PARENT: ParentLimits = { currency: "USD", maximum_amount: 100, cumulative_maximum: 300.3 };

describe("parentLimitsProblem", () => {
  it("has nothing to check without parent_limits", () => {
    expect(parentLimitsProblem(agreement([m("a", { maximum_amount: 1e9, currency: "EUR" })]))).toBeUndefined();
  });

  it("accepts intents inside the parent, including slices that add up exactly (no float drift)", () => {
    const mandates = [m("a", { maximum_amount: 100, cumulative_maximum: 100.1 }), m("b", { cumulative_maximum: 100.1 }), m("c", { cumulative_maximum: 100.1 })];
    // 100.1 * 3 is 300.29999999999995 in floats; in minor units it is exactly 30030.
    expect(parentLimitsProblem(agreement(mandates, PARENT))).toBeUndefined();
    expect(parentLimitsProblem(agreement([m("a")], PARENT))).toBeUndefined();
    expect(parentLimitsProblem(agreement([m("a", { maximum_amount: 5000, cumulative_maximum: 5000 })], { currency: "USD" }))).toBeUndefined();
  });

  it("names a ceiling, a slice or a sum of slices above the parent", () => {
    expect(parentLimitsProblem(agreement([m("a"), m("b", { maximum_amount: 100.01 })], PARENT))).toMatch(/intent "b"'s maximum_amount 100.01 is above/);
    expect(parentLimitsProblem(agreement([m("a", { cumulative_maximum: 300.31 })], PARENT))).toMatch(/intent "a"'s cumulative_maximum 300.31 is above/);
    const sum = [m("a", { cumulative_maximum: 150 }), m("b", { cumulative_maximum: 150.31 })];
    expect(parentLimitsProblem(agreement(sum, PARENT))).toMatch(/add up to more than/);
  });

  it("names a mandate in another currency and unusable amounts", () => {
    expect(parentLimitsProblem(agreement([m("a"), m("b", { currency: "EUR" })], PARENT))).toMatch(/intent "b" is in EUR but parent_limits is in USD/);
    expect(parentLimitsProblem(agreement([m("a", { maximum_amount: 10.001 })], PARENT))).toMatch(/not a usable amount in USD/);
    expect(parentLimitsProblem(agreement([m("a", { cumulative_maximum: -1 })], PARENT))).toMatch(/not a usable amount/);
    expect(parentLimitsProblem(agreement([m("a", { currency: "JPY", maximum_amount: 1.5 })], { currency: "JPY" }))).toMatch(/not a usable amount in JPY/);
    expect(parentLimitsProblem(agreement([m("a")], { ...PARENT, maximum_amount: Number.POSITIVE_INFINITY }))).toMatch(/parent_limits.maximum_amount/);
    expect(parentLimitsProblem(agreement([m("a")], { currency: "usd", cumulative_maximum: 1 }))).toMatch(/parent_limits.cumulative_maximum/);
  });

  it("reports hostile shapes instead of throwing", () => {
    expect(parentLimitsProblem(agreement([null as unknown as Mandate], PARENT))).toBeTypeOf("string");
    expect(parentLimitsProblem({ ...agreement([m("a")]), parent_limits: null as unknown as ParentLimits })).toBeTypeOf("string");
    expect(parentLimitsProblem({ ...agreement([m("a")], PARENT), mandates: 3 as unknown as Mandate[] })).toBeTypeOf("string");
  });
});
