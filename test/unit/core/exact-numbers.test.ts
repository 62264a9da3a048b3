import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { describeInexactNumber, findInexactNumber, isExactNumberLiteral } from "../../../src/core/canonical/index.js";
import { toMinor } from "../../../src/core/money/index.js";

describe("exact JSON numbers", () => {
  it("knows which literals a double holds exactly", () => {
    for (const t of [
      "0",
      "-0",
      "0.1",
      "1.10",
      "50",
      "50.00",
      "1e2",
      "1E+2",
      "12.345",
      "0.30000000000000004",
      "9007199254740992",
      "1234567890123456",
      "5e-324",
      "0.000000000000000001",
    ]) {
      expect(isExactNumberLiteral(t), t).toBe(true);
    }
    for (const t of ["50.000000000000001", "1e400", "-1e400", "1e-400", "12345678901234567890", "9007199254740993", "0.1000000000000000055511151231257827"]) {
      expect(isExactNumberLiteral(t), t).toBe(false);
    }
  });

  it("finds the first inexact number with its path, skipping strings and names", () => {
    const text = '{"n":"50.000000000000001","a":[1,{"x":2}],"action":{"amount":50.000000000000001,"currency":"USD"},"later":1e400}';
    expect(JSON.parse(text).action.amount).toBe(50); // what JSON.parse alone would let through
    const found = findInexactNumber(text);
    expect(found).toEqual({ path: ["action", "amount"], literal: "50.000000000000001", read: 50 });
    expect(describeInexactNumber(found!, "the body")).toMatch(/^action\.amount 50\.000000000000001 cannot be read exactly: .* read as 50;/);
    expect(findInexactNumber("[0, 1, [2, 3.00000000000000000001]]")?.path).toEqual(["2", "1"]);
    expect(findInexactNumber('{"a\\"b": {"c,d": [1e-400]}}')?.path).toEqual(['a"b', "c,d", "0"]);
    expect(findInexactNumber("123456789012345678901")?.path).toEqual([]);
    expect(findInexactNumber('{"amount": 50.00, "big": 1234567890123456, "s": "1e400 12345678901234567890"}')).toBeUndefined();
  });

  it("keeps the sign, and agrees with a reference walk over arbitrary literals, names and strings", () => {
    expect(findInexactNumber('{"a":-50.000000000000001}')).toEqual({ path: ["a"], literal: "-50.000000000000001", read: -50 });
    const literal = fc.oneof(
      fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 22n }), fc.integer({ min: 0, max: 20 }), fc.boolean()).map(([d, scale, neg]) => {
        const t = d.toString().padStart(scale + 1, "0");
        return `${neg ? "-" : ""}${scale === 0 ? t : `${t.slice(0, -scale)}.${t.slice(-scale)}`}`;
      }),
      fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: -420, max: 420 })).map(([m, e]) => `${m}e${e}`),
    );
    const text = fc.string({ unit: fc.constantFrom("a", "1", "e", ".", '"', "\\", ",", "[", "{", ":", "9") });
    fc.assert(
      fc.property(fc.array(fc.tuple(text, literal, text), { maxLength: 8 }), (members) => {
        const doc = `{${members.map(([k, v, str], i) => `${JSON.stringify(`${k}${i}`)}:[${JSON.stringify(str)},${v}]`).join(",")}}`;
        JSON.parse(doc); // valid JSON
        const first = members.findIndex(([, v]) => !isExactNumberLiteral(v));
        const found = findInexactNumber(doc);
        if (first < 0) expect(found).toBeUndefined();
        else expect(found).toEqual({ path: [`${members[first]![0]}${first}`, "1"], literal: members[first]![1], read: Number(members[first]![1]) });
      }),
      { numRuns: 300 },
    );
  });

  it("deep nesting needs no recursion", () => {
    const deep = `${"[".repeat(100_000)}1e400${"]".repeat(100_000)}`;
    expect(findInexactNumber(deep)?.path.length).toBe(100_000);
  });

  it("every exact literal's value reaches toMinor unchanged", () => {
    // Property: for literals with up to 15 significant digits, String(JSON.parse(t)) names the
    // same amount, so toMinor of the parsed number equals toMinor of the literal's text.
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 6 }), (digits, scale) => {
        const s = digits.toString().padStart(scale + 1, "0");
        const t = scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`;
        expect(isExactNumberLiteral(t)).toBe(true);
        const n = JSON.parse(t) as number;
        let fromNumber: bigint | string;
        let fromText: bigint | string;
        try {
          fromNumber = toMinor(n, "KWD");
        } catch (e) {
          fromNumber = (e as Error).name;
        }
        try {
          fromText = toMinor(t, "KWD");
        } catch (e) {
          fromText = (e as Error).name;
        }
        expect(fromNumber).toEqual(fromText);
      }),
      { numRuns: 500 },
    );
  });
});
