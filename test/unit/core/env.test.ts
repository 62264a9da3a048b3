import { describe, expect, it } from "vitest";
import { envInteger, envText } from "../../../src/core/env/index.js";

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
