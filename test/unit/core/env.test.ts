import { describe, expect, it } from "vitest";
import { envInteger, envIntegerWithin, envText } from "../../../src/core/env/index.js";

describe("envText", () => {
  it("trims, and treats blank as unset", () => {
    expect(envText({ A: "  x y  " }, "A")).toBe("x y");
    expect(envText({ A: "   " }, "A")).toBeNull();
    expect(envText({}, "A")).toBeNull();
  });
});

describe("envInteger", () => {
  const range = { min: 5, max: 100, dflt: 42 };
  it("reads integers in range, bounds included; unset is the default without a problem", () => {
    const problems: string[] = [];
    expect(envInteger({ N: "5" }, "N", range, problems)).toBe(5);
    expect(envInteger({ N: " 100 " }, "N", range, problems)).toBe(100);
    expect(envInteger({}, "N", range, problems)).toBe(42);
    expect(problems).toEqual([]);
  });
  it("falls back to the default with one problem for anything else", () => {
    for (const bad of ["4", "101", "-7", "7.5", "1e2", "0x10", "ten", "99999999999999999999"]) {
      const problems: string[] = [];
      expect(envInteger({ N: bad }, "N", range, problems)).toBe(42);
      expect(problems).toEqual(["N must be an integer from 5 to 100; using 42"]);
    }
  });
});

describe("envIntegerWithin", () => {
  const range = { min: 5, max: 100, dflt: 42 };
  it("keeps a setting on its side of another one, with one problem naming both", () => {
    const problems: string[] = [];
    expect(envIntegerWithin({ N: "50" }, "N", range, { atMost: ["M", 60] }, problems)).toBe(50);
    expect(envIntegerWithin({ N: "70" }, "N", range, { atMost: ["M", 60] }, problems)).toBe(60);
    expect(envIntegerWithin({ N: "10" }, "N", range, { atLeast: ["L", 20] }, problems)).toBe(20);
    expect(envIntegerWithin({}, "N", range, { atLeast: ["L", 20] }, problems)).toBe(42);
    expect(problems).toEqual(["N is above M; using M's value", "N is below L; using L's value"]);
  });
});
