import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JsonNumber, JsonSyntaxError, parseJsonKeepingNumbers, plainDecimal } from "../../../src/fx/json-numbers.js";

/** The parsed value with numbers as their text and Maps as plain objects, for comparison. */
function plain(v: unknown): unknown {
  if (v instanceof JsonNumber) return { n: v.text };
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]));
  if (Array.isArray(v)) return v.map(plain);
  return v;
}

describe("parseJsonKeepingNumbers", () => {
  it("keeps every number's exact text", () => {
    const v = parseJsonKeepingNumbers(' {"amount":1.0,"rates":{"USD":1.10,"JPY":6.1e-05,"X":-0},"a":[true,false,null,"s\\u00e9"]} ');
    expect(plain(v)).toEqual({ amount: { n: "1.0" }, rates: { USD: { n: "1.10" }, JPY: { n: "6.1e-05" }, X: { n: "-0" } }, a: [true, false, null, "sé"] });
  });

  it("keeps a member named __proto__ as data", () => {
    const v = parseJsonKeepingNumbers('{"__proto__":{"polluted":1}}');
    expect(v instanceof Map && v.has("__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses what JSON refuses, repeated members and deep nesting", () => {
    for (const bad of [
      "",
      "{",
      "[1,]",
      "{'a':1}",
      "01",
      "1.",
      ".5",
      "+1",
      "NaN",
      '{"a":1,}',
      '"\u0001"',
      '"\\x"',
      "[1] 2",
      '{"a":1,"a":2}',
      "[".repeat(17) + "]".repeat(17),
    ]) {
      expect(() => parseJsonKeepingNumbers(bad), bad).toThrow(JsonSyntaxError);
    }
  });

  it("agrees with JSON.parse on any JSON value (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const text = JSON.stringify(value);
        const back = (v: unknown): unknown => {
          if (v instanceof JsonNumber) return Number(v.text);
          if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, back(x)]));
          if (Array.isArray(v)) return v.map(back);
          return v;
        };
        expect(back(parseJsonKeepingNumbers(text))).toEqual(JSON.parse(text));
      }),
      { numRuns: 150 },
    );
  });
});

describe("plainDecimal", () => {
  it("returns text without an exponent unchanged and expands exponents by moving the point", () => {
    expect(plainDecimal("1.0842")).toBe("1.0842");
    expect(plainDecimal("1.10")).toBe("1.10");
    expect(plainDecimal("12345")).toBe("12345");
    expect(plainDecimal("6.1e-05")).toBe("0.000061");
    expect(plainDecimal("1.5E+3")).toBe("1500");
    expect(plainDecimal("1.25e1")).toBe("12.5");
    expect(plainDecimal("0.5e1")).toBe("5");
    expect(plainDecimal("120e-2")).toBe("1.2");
  });

  it("refuses negatives and absurd lengths", () => {
    expect(plainDecimal("-1.2")).toBeUndefined();
    expect(plainDecimal("1e400")).toBeUndefined();
    expect(plainDecimal("1e-70")).toBeUndefined();
  });

  it("equals the number's value for any exponent form (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99999 }), fc.integer({ min: -12, max: 12 }), (mant, exp) => {
        const text = `${mant}e${exp}`;
        const out = plainDecimal(text);
        expect(out).toMatch(/^\d+(\.\d*[1-9])?$/);
        expect(Number(out)).toBe(Number(text));
      }),
      { numRuns: 150 },
    );
  });
});
