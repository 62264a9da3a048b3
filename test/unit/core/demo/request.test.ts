import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DemoInputError, parseDemoCheckRequest } from "../../../../src/core/demo/index.js";

const intent = { maximum_amount: 50, currency: "USD" };
const payment = { amount: 10, currency: "USD" };

function problem(body: unknown): string {
  try {
    parseDemoCheckRequest(body);
  } catch (e) {
    if (e instanceof DemoInputError) return e.message;
    throw e;
  }
  throw new Error("accepted");
}

describe("parseDemoCheckRequest", () => {
  it("returns the typed request with defaults (include_expiry true) and ignores unknown members", () => {
    expect(parseDemoCheckRequest({ intent: { ...intent, extra: 1 }, payment, more: true })).toEqual({
      intent: { maximum_amount: 50, currency: "USD", include_expiry: true },
      payment: { amount: 10, currency: "USD" },
    });
  });

  it("keeps the optional text fields; an empty category or time_limit counts as absent", () => {
    const r = parseDemoCheckRequest({
      intent: { ...intent, purpose: "p", category: " ", natural_language: "nl", include_expiry: false, time_limit: "" },
      payment: { ...payment, merchant: "m", item: "i" },
    });
    expect(r.intent).toEqual({ maximum_amount: 50, currency: "USD", purpose: "p", natural_language: "nl", include_expiry: false });
    expect(r.payment).toEqual({ amount: 10, currency: "USD", merchant: "m", item: "i" });
  });

  it("accepts a date or an RFC 3339 date-time as time_limit", () => {
    expect(parseDemoCheckRequest({ intent: { ...intent, time_limit: "2030-01-31" }, payment }).intent.time_limit).toBe("2030-01-31");
    expect(parseDemoCheckRequest({ intent: { ...intent, time_limit: "2030-01-31T10:00:00Z" }, payment }).intent.time_limit).toBe("2030-01-31T10:00:00Z");
  });

  it("names the field and the reason of every refusal", () => {
    expect(problem(null)).toBe("request body must be a JSON object");
    expect(problem({ intent })).toBe("payment is required");
    expect(problem({ intent: "x", payment })).toBe("intent must be an object");
    expect(problem({ intent: { currency: "USD" }, payment })).toBe("intent.maximum_amount is required");
    expect(problem({ intent: { ...intent, maximum_amount: "50" }, payment })).toBe("intent.maximum_amount must be a number");
    expect(problem({ intent, payment: { ...payment, amount: -0.01 } })).toBe("payment.amount must not be negative");
    expect(problem({ intent, payment: { ...payment, amount: 0.001 } })).toBe("payment.amount 0.001 has more decimal places than USD allows");
    expect(problem({ intent: { ...intent, currency: "KWD", maximum_amount: 1.2345 }, payment })).toBe(
      "intent.maximum_amount 1.2345 has more decimal places than KWD allows",
    );
    expect(problem({ intent: { ...intent, currency: "usd" }, payment })).toBe("intent.currency must be three upper-case letters");
    expect(problem({ intent, payment: { ...payment, currency: 840 } })).toBe("payment.currency must be three upper-case letters");
    expect(problem({ intent: { ...intent, include_expiry: 1 }, payment })).toBe("intent.include_expiry must be a boolean");
    expect(problem({ intent: { ...intent, time_limit: "2030-02-29" }, payment })).toBe(
      "intent.time_limit must be a date (YYYY-MM-DD) or an RFC 3339 date-time",
    );
    expect(problem({ intent: { ...intent, purpose: 5 }, payment })).toBe("intent.purpose must be a string");
    expect(problem({ intent: { ...intent, purpose: "x".repeat(501) }, payment })).toBe("intent.purpose must be at most 500 characters");
    expect(problem({ intent, payment: { ...payment, item: "x".repeat(201) } })).toBe("payment.item must be at most 200 characters");
  });

  it("accepts every non-negative whole-cent USD amount and refuses every sub-cent one", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1, max: 9 }), (cents, extra) => {
        const ok = parseDemoCheckRequest({ intent, payment: { amount: cents / 100, currency: "USD" } });
        expect(ok.payment.amount).toBe(cents / 100);
        const bad = Number(`${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}${extra}`);
        expect(() => parseDemoCheckRequest({ intent, payment: { amount: bad, currency: "USD" } })).toThrow(DemoInputError);
      }),
      { numRuns: 150 },
    );
  });
});
