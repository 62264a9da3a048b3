/**
 * The controller's condition reasons: PascalCase, valid metav1.Condition reasons, apart from the
 * reason codes of the one registry, and every one documented in docs/reasons.md.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONTROLLER_REASONS, CONTROLLER_REASON_NAMES } from "../../../src/controller/reasons.js";
import { REASON_CODES } from "../../../src/core/evaluate/reasons.js";

/** metav1.Condition's reason pattern (k8s.io/apimachinery). */
const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

describe("controller reasons", () => {
  it("are PascalCase and valid condition reasons, each saying which conditions carry it", () => {
    for (const r of CONTROLLER_REASON_NAMES) {
      expect(r).toMatch(/^[A-Z][a-z]+(?:[A-Z][a-z]+)*$/);
      expect(r).toMatch(CONDITION_REASON);
      expect(CONTROLLER_REASONS[r]).toMatch(/^[A-Za-z, ]+: /);
    }
  });

  it("never collide with a reason code of the registry", () => {
    const codes = new Set<string>(REASON_CODES);
    expect(CONTROLLER_REASON_NAMES.filter((r) => codes.has(r) || codes.has(r.toUpperCase()))).toEqual([]);
  });

  it("are listed in docs/reasons.md", () => {
    const doc = readFileSync(new URL("../../../docs/reasons.md", import.meta.url), "utf8");
    for (const r of CONTROLLER_REASON_NAMES) expect(doc).toContain(`| \`${r}\` |`);
  });
});
