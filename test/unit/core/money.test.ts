import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MoneyError,
  convertMinor,
  currencyExponent,
  currencyRefusal,
  formatMinor,
  isCurrency,
  isIsoCurrency,
  parseRate,
  toMinor,
} from "../../../src/core/money/index.js";

describe("money", () => {
  it("knows ISO 4217 exponents", () => {
    expect(currencyExponent("USD")).toBe(2);
    expect(currencyExponent("JPY")).toBe(0);
    expect(currencyExponent("KWD")).toBe(3);
    expect(isCurrency("EUR")).toBe(true);
    expect(isCurrency("eur")).toBe(false);
    expect(isCurrency("EURO")).toBe(false);
    // Well-formed but not ISO 4217: Intl would format it, no source or ledger knows it.
    for (const c of ["QQQ", "ZZZ", "ABC", "USX"]) expect(isCurrency(c), c).toBe(false);
    // ISO 4217 fund codes ICU does not list as in use are still payment currencies.
    for (const c of ["CLF", "USN", "UYW"]) expect(isCurrency(c), c).toBe(true);
  });
  it("takes minor units from ISO 4217, not from CLDR's display digits", () => {
    // CLDR (Intl) shows these with 0 decimals; ISO 4217 gives HUF, COP, IDR, PKR 2 and IQD 3.
    for (const [c, e] of [
      ["HUF", 2],
      ["COP", 2],
      ["IDR", 2],
      ["PKR", 2],
      ["IQD", 3],
      ["JPY", 0],
      ["KRW", 0],
      ["ISK", 0],
      ["CLP", 0],
      ["BHD", 3],
      ["TND", 3],
      ["CLF", 4],
      ["UYW", 4],
      ["EUR", 2],
      ["MGA", 2],
    ] as const) {
      expect(currencyExponent(c), c).toBe(e);
    }
    expect(toMinor("1.005", "IQD")).toBe(1005n);
    expect(() => toMinor("1.0005", "IQD")).toThrow(/more than 3 decimal places for IQD/);
    expect(toMinor(1999.99, "HUF")).toBe(199999n);
    expect(() => toMinor(1.5, "JPY")).toThrow(/more than 0 decimal places for JPY/);
  });
  it("knows XXX, XTS and the other codes without a minor unit as currencies, never as payment currencies", () => {
    for (const c of ["XXX", "XTS", "XAU", "XAG", "XDR", "XPT"]) {
      expect(isIsoCurrency(c), c).toBe(true);
      expect(isCurrency(c), c).toBe(false);
      expect(() => toMinor(1, c), c).toThrow(/not a payment currency/);
      expect(currencyRefusal(c), c).toBe("is not a payment currency (ISO 4217 gives it no minor unit)");
    }
    expect(currencyRefusal("QQQ")).toBe("is not a known currency");
    expect(isIsoCurrency("QQQ")).toBe(false);
    expect(currencyRefusal("USD")).toBeUndefined();
  });
  it("converts to minor units exactly", () => {
    expect(toMinor(12.34, "USD")).toBe(1234n);
    expect(toMinor("19.99", "EUR")).toBe(1999n);
    expect(toMinor(1000, "JPY")).toBe(1000n);
    expect(toMinor(1.234, "KWD")).toBe(1234n);
    expect(toMinor(1e21, "USD")).toBe(10n ** 23n);
    expect(toMinor(0, "USD")).toBe(0n);
  });
  it("refuses amounts it would have to round", () => {
    expect(() => toMinor(0.1 + 0.2, "USD")).toThrow(MoneyError); // 0.30000000000000004
    expect(() => toMinor(12.345, "USD")).toThrow(/decimal places/);
    expect(() => toMinor(1.5, "JPY")).toThrow(MoneyError);
    expect(() => toMinor(-1, "USD")).toThrow(MoneyError);
    expect(() => toMinor(Number.NaN, "USD")).toThrow(MoneyError);
    expect(() => toMinor(Number.POSITIVE_INFINITY, "USD")).toThrow(MoneyError);
    expect(() => toMinor(1, "XXXX")).toThrow(MoneyError);
    expect(() => toMinor(1e-7, "USD")).toThrow(MoneyError);
  });
  it("round-trips through formatMinor", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.constantFrom("USD", "JPY", "KWD"), (minor, ccy) => {
        expect(toMinor(formatMinor(minor, ccy), ccy)).toBe(minor);
      }),
      { numRuns: 200 },
    );
  });
  it("sums as integers: a thousand 0.10 are exactly 100.00", () => {
    let total = 0n;
    for (let i = 0; i < 1000; i++) total += toMinor(0.1, "USD");
    expect(formatMinor(total, "USD")).toBe("100.00");
  });
  it("converts with exact rates, rounding up", () => {
    expect(convertMinor(1000n, "EUR", "USD", parseRate("1.0842"))).toBe(1085n); // 10.842 -> 10.85
    expect(convertMinor(100n, "USD", "JPY", parseRate("151.37"))).toBe(152n);
    expect(convertMinor(1000n, "JPY", "USD", parseRate("0.0066"))).toBe(660n);
    expect(() => parseRate("0")).toThrow(MoneyError);
    expect(() => parseRate("1e3")).toThrow(MoneyError);
  });
});
