import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderReasonsDoc } from "../../hack/gen-reasons-doc.js";
import { REASON_CODES, REASONS } from "../../src/core/evaluate/reasons.js";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** The text of the section headed `## title` of the doc at `path`, up to the next `## `. */
function section(path: string, title: string): string {
  const doc = read(path);
  const start = doc.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`${path} has no section ${title}`);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

describe("generated docs", () => {
  it("docs/reasons.md is current (run npm run gen:docs)", () => {
    expect(read("docs/reasons.md")).toBe(renderReasonsDoc());
  });
});

describe("docs by task", () => {
  it("docs/operations/troubleshooting.md says what to do about every fail-closed STEP_UP reason", () => {
    const troubleshooting = read("docs/operations/troubleshooting.md");
    const stepUps = REASON_CODES.filter((c) => REASONS[c].verdict === "STEP_UP");
    expect(stepUps.length).toBeGreaterThan(10);
    expect(stepUps.filter((c) => !troubleshooting.includes(`| \`${c}\` |`))).toEqual([]);
  });

  it("has an architecture picture (Mermaid), CRD upgrade notes and a LICENSE matching package.json", () => {
    expect(section("docs/concepts/index.md", "Architecture")).toMatch(/```mermaid\nflowchart /);
    expect(read("docs/operations/upgrading.md")).toContain("kubectl apply --server-side --force-conflicts -f crds/");
    expect((JSON.parse(read("package.json")) as { license: string }).license).toBe("Apache-2.0");
    const license = read("LICENSE");
    expect(license).toMatch(/^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
    expect(license).toContain("END OF TERMS AND CONDITIONS");
    expect(license).toContain("9. Accepting Warranty or Additional Liability.");
  });
});
