/**
 * Reading manifests: several documents per file, the default namespace, documents of other
 * kinds skipped with a note, and a file that cannot be used as a whole reported as ONE problem
 * (with the line of a YAML error) and no objects.
 */
import { describe, expect, it } from "vitest";
import { isManifestFileName, parseManifestFile } from "../../../../src/sources/local/manifests.js";

const sub = (name: string, extra = "") => `apiVersion: writ.dev/v1alpha1
kind: Subscription
metadata:
  name: ${name}
${extra}spec:
  agentId: agent_a
  webhookUrl: https://hooks.example.com/a
`;

describe("parseManifestFile", () => {
  it("reads every Writ document, defaults the namespace, skips other kinds with a note", () => {
    const text = `${sub("a")}---\n${sub("b", "  namespace: team\n")}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n`;
    const r = parseManifestFile("f.yaml", text);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.objects.map((o) => [o.plural, o.object.metadata.namespace, o.object.metadata.name])).toEqual([
      ["subscriptions", "default", "a"],
      ["subscriptions", "team", "b"],
    ]);
    expect(r.objects[0]?.object.spec).toEqual({ agentId: "agent_a", webhookUrl: "https://hooks.example.com/a" });
    expect(r.notes).toEqual([expect.stringContaining("document 3 (v1 ConfigMap) skipped")]);
  });

  it("reports a YAML error with its line, and no objects", () => {
    const r = parseManifestFile("f.yaml", `${sub("a")}---\nkind: Delegation\nspec: [unclosed\n`);
    expect(r).toEqual({ file: "f.yaml", ok: false, problem: expect.stringMatching(/^YAML error at line \d+: /) });
  });

  it("refuses a Writ document without a usable name, namespace, spec or labels", () => {
    const cases: [string, RegExp][] = [
      ["apiVersion: writ.dev/v1alpha1\nkind: Subscription\nspec: {}\n", /metadata\.name must be a lowercase DNS name/],
      [sub("Upper_Case"), /metadata\.name/],
      [sub("a", "  namespace: Not_Valid\n"), /metadata\.namespace/],
      ["apiVersion: writ.dev/v1alpha1\nkind: Subscription\nmetadata: {name: a}\nspec: [1]\n", /spec must be a mapping/],
      [sub("a", "  labels: {x: 1}\n"), /labels and annotations/],
      ["- just\n- a list\n", /is not a mapping/],
    ];
    for (const [text, problem] of cases) {
      const r = parseManifestFile("f.yaml", text);
      expect(r.ok, text).toBe(false);
      if (!r.ok) expect(r.problem).toMatch(problem);
    }
  });

  it("takes an empty file for one being saved, not for one that declares nothing; whitespace or comments alone declare nothing", () => {
    // An editor that truncates before it writes leaves the file empty for a moment.
    expect(parseManifestFile("f.yaml", "")).toEqual({
      file: "f.yaml",
      ok: false,
      problem: "the file is empty (being saved?); to withdraw what it declared, delete the file",
    });
    expect(parseManifestFile("f.yaml", "\n")).toEqual({ file: "f.yaml", ok: true, objects: [], notes: [] });
    expect(parseManifestFile("f.yaml", "# nothing here\n")).toEqual({ file: "f.yaml", ok: true, objects: [], notes: [] });
  });
});

describe("isManifestFileName", () => {
  it("reads YAML and JSON files, not hidden or backup files", () => {
    expect(["a.yaml", "b.yml", "c.JSON"].every(isManifestFileName)).toBe(true);
    expect([".a.yaml", "a.yaml~", "a.yaml.swp", "README.md"].some(isManifestFileName)).toBe(false);
  });
});
