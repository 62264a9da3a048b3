import { describe, expect, it } from "vitest";
import { addSpend, agreementSpentIn, agreementTotalAs, checkBudget, ledgerCurrencyOf, remainingOf, spentIn } from "../../../src/core/money/budget.js";

describe("the budget rule (src/core/money/budget.ts)", () => {
  describe("spentIn: mixed currencies", () => {
    it("adds the spend in the limit's currency", () => {
      expect(
        spentIn(
          [
            ["USD", 100n],
            ["USD", 250n],
          ],
          "USD",
        ),
      ).toBe(350n);
      expect(spentIn([], "USD")).toBe(0n);
    });
    it("is unknown when any positive spend is in another currency (it cannot be added without a rate)", () => {
      expect(
        spentIn(
          [
            ["USD", 100n],
            ["EUR", 1n],
          ],
          "USD",
        ),
      ).toBeUndefined();
      expect(spentIn(new Map([["EUR", 5n]]), "USD")).toBeUndefined();
    });
    it("leaves out other currencies whose spend is zero (released)", () => {
      expect(
        spentIn(
          [
            ["USD", 100n],
            ["EUR", 0n],
          ],
          "USD",
        ),
      ).toBe(100n);
    });
    it("without a currency knows only the absence of spend", () => {
      expect(spentIn([["EUR", 0n]], null)).toBe(0n);
      expect(spentIn([["EUR", 3n]], null)).toBeUndefined();
    });
  });

  it("addSpend adds sources by currency (stored totals plus a batch's earlier spends)", () => {
    const sum = addSpend(
      [
        ["USD", 1n],
        ["EUR", 2n],
      ],
      new Map([["USD", 10n]]),
      undefined,
    );
    expect([...sum].sort()).toEqual([
      ["EUR", 2n],
      ["USD", 11n],
    ]);
  });

  describe("checkBudget: a limit holds amount on top of spent when spent + amount <= limit", () => {
    it("within, at the limit exactly", () => {
      expect(checkBudget(1000n, 400n, 600n)).toBe("within");
    });
    it("exceeded one minor unit above", () => {
      expect(checkBudget(1000n, 400n, 601n)).toBe("exceeded");
    });
    it("unknown when the spend so far is unknown (fail closed at the caller)", () => {
      expect(checkBudget(1000n, undefined, 0n)).toBe("unknown");
    });
  });

  it("remainingOf: limit - spent, at least 0; 0 when the spend is unknown", () => {
    expect(remainingOf(1000n, 400n)).toBe(600n);
    expect(remainingOf(1000n, 1400n)).toBe(0n);
    expect(remainingOf(1000n, undefined)).toBe(0n);
  });

  describe("an agreement's total", () => {
    const mandates = [
      { intent_id: "i-usd", currency: "USD" },
      { intent_id: "i-eur", currency: "EUR" },
      { intent_id: "i-usd2", currency: "USD" },
    ];
    const spent = new Map([
      ["i-usd", 100n],
      ["i-eur", 7n],
      ["i-usd2", 50n],
    ]);
    it("is kept in the parent limits' currency, else the first intent's", () => {
      expect(ledgerCurrencyOf({ mandates, parent_limits: { currency: "EUR" } })).toBe("EUR");
      expect(ledgerCurrencyOf({ mandates })).toBe("USD");
      expect(ledgerCurrencyOf({ mandates: [] })).toBeUndefined();
    });
    it("adds the intents in that currency", () => {
      expect(agreementSpentIn(mandates, spent, "USD")).toBe(150n);
      expect(agreementSpentIn(mandates, spent, "EUR")).toBe(7n);
      expect(agreementSpentIn(mandates, spent, undefined)).toBe(0n);
    });
    it("counts for a delegation budget only when kept in its currency and not leaving intents out", () => {
      expect(agreementTotalAs({ mandates: [mandates[0]!] }, 100n, "USD")).toBe(100n);
      expect(agreementTotalAs({ mandates: [mandates[0]!] }, 100n, "EUR")).toBeUndefined();
      // Without parent_limits, the EUR intent is left out of the USD total: unknown.
      expect(agreementTotalAs({ mandates }, 150n, "USD")).toBeUndefined();
      expect(agreementTotalAs({ mandates, parent_limits: { currency: "USD" } }, 150n, "USD")).toBe(150n);
    });
  });
});
