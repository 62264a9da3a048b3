import { describe, expect, it } from "vitest";
import type { Action, PreparedAgreement, PreparedDelegation } from "../../../src/core/evaluate/index.js";
import { ratesFor } from "../../../src/verify/pipeline/rates.js";

describe("ratesFor", () => {
  it("asks for the rate of the decision's UTC day, never the day of the agent's proposed_at", async () => {
    const agreement = { mandates: [{ mandate: { intent_id: "i1", currency: "USD" } }] } as unknown as PreparedAgreement;
    const delegation = { scope: { scope: { currency: "USD" } } } as unknown as PreparedDelegation;
    const action = { action_id: "a", action_type: "purchase", amount: 1600, currency: "CHF", proposed_at: "2000-01-03T12:00:00Z" } as Action;
    const asked: string[] = [];
    const rate = await ratesFor(
      agreement,
      delegation,
      action,
      async (from, to, day) => {
        asked.push(`${from}/${to}/${day}`);
        return { num: 9n, den: 10n };
      },
      Date.parse("2026-06-01T23:59:59Z"),
    );
    expect(asked).toEqual(["CHF/USD/2026-06-01"]);
    expect(rate?.("CHF", "USD")).toEqual({ num: 9n, den: 10n });
  });
});
