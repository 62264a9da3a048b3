import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
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

/** The environment variables the code reads: quoted names and `env.NAME` reads, in src/ and bin/. */
function settingsRead(): string[] {
  const names = new Set<string>();
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : /\.(ts|mjs|js)$/.test(n) ? [join(dir, n)] : []));
  const root = new URL("../../", import.meta.url).pathname;
  for (const file of [...walk(join(root, "src")), ...walk(join(root, "bin"))]) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/"((?:WRIT|SVC|BUR)_[A-Z0-9_]+)"/g)) names.add(m[1] as string);
    for (const m of text.matchAll(
      /env\??\.((?:WRIT|SVC|BUR)_[A-Z0-9_]+|PORT|HOST|DATABASE_URL|DATABASE_READ_URL|LOG_LEVEL|METRICS_PORT|METRICS_HOST|KUBECONFIG)\b/g,
    ))
      names.add(m[1] as string);
  }
  return [...names].sort();
}

describe("the settings reference", () => {
  it("docs/reference/settings.md names every setting the code reads", () => {
    const doc = read("docs/reference/settings.md");
    const names = settingsRead();
    expect(names.length).toBeGreaterThan(60);
    expect(names.filter((n) => !doc.includes(`\`${n}\``))).toEqual([]);
  });
});
