import { describe, expect, it } from "vitest";
import { budgetView, type Mandate } from "../../../../src/core/agreement/index.js";

const m = (intent_id: string, currency: string, over: Partial<Mandate> = {}): Mandate =>
  ({ intent_id, currency, principal: { type: "human", id: "p" }, agent: { agent_id: "a" }, ...over }) as Mandate;

describe("budgetView", () => {
  it("computes remaining in minor units, never below 0, in each currency's precision", () => {
    const v = budgetView({
      mandates: [m("usd", "USD", { maximum_amount: 40, cumulative_maximum: 60 }), m("jpy", "JPY", { cumulative_maximum: 1000 })],
      parentLimits: { currency: "USD", cumulative_maximum: 100 },
      spent: new Map([
        ["usd", 6010n],
        ["jpy", 1200n],
      ]),
    });
    expect(v).toEqual({
      intents: [
        { intent_id: "usd", currency: "USD", maximum_amount: "40.00", limit: "60.00", spent: "60.10", remaining: "0.00" },
        { intent_id: "jpy", currency: "JPY", limit: "1000", spent: "1200", remaining: "0" },
      ],
      // Only the parent currency's intents count toward it.
      agreement: { currency: "USD", limit: "100.00", spent: "60.10", remaining: "39.90" },
    });
  });

  it("0.1 + 0.2 is 0.30: no float sums", () => {
    const v = budgetView({ mandates: [m("i", "USD", { cumulative_maximum: 0.3 })], spent: new Map([["i", 30n]]) });
    expect(v.intents[0]).toMatchObject({ limit: "0.30", spent: "0.30", remaining: "0.00" });
  });

  it("a delegation whose spend mixes currencies has no known spend and nothing remaining (verify refuses it)", () => {
    const v = budgetView({
      mandates: [m("i", "USD")],
      spent: new Map(),
      delegation: { delegationId: "d", currency: "EUR", cumulativeMaximum: 50, spentMinor: undefined },
    });
    expect(v.delegation).toEqual({ delegation_id: "d", currency: "EUR", limit: "50.00", remaining: "0.00" });
    expect(v.intents[0]).toEqual({ intent_id: "i", currency: "USD", spent: "0.00" });
  });
});
