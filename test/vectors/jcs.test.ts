// RFC 8785 vectors (cyberphone/json-canonicalization, Apache-2.0): canonical output must match
// output/X.json and outhex/X.txt byte for byte.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalBytes, canonicalJson } from "../../src/core/canonical/index.js";

const dir = join(import.meta.dirname, "jcs");
const names = readdirSync(join(dir, "input")).filter((f) => f.endsWith(".json"));

describe("JCS vectors", () => {
  it("has every vector file", () => {
    expect(names.sort()).toEqual(["arrays.json", "french.json", "structures.json", "unicode.json", "values.json", "weird.json"]);
  });
  for (const name of names) {
    it(`canonicalizes ${name}`, () => {
      const input: unknown = JSON.parse(readFileSync(join(dir, "input", name), "utf8"));
      const want = readFileSync(join(dir, "output", name));
      const hex = readFileSync(join(dir, "outhex", name.replace(".json", ".txt")), "utf8").replace(/\s+/g, "");
      expect(canonicalBytes(input).equals(want)).toBe(true);
      expect(canonicalBytes(input).toString("hex")).toBe(hex);
      expect(Buffer.from(canonicalJson(input), "utf8").equals(want)).toBe(true);
    });
  }
});
