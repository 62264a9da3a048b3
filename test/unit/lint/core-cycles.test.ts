/**
 * No import cycles between the areas of src/core (src/core/<name>, hack/eslint/areas.js): the
 * areas form a one-way graph, so each is imported through its index.ts and none needs the
 * areas rule's IMPORT_UNITS exemption. Every relative import counts, type-only ones, re-exports
 * and `import("...")` types included (TypeScript's own scanner, `preProcessFile`).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
/** The areas rule (a plain JS module: loaded untyped). */
const RULE_FILE: string = "../../../hack/eslint/areas.js";
const { IMPORT_UNITS, areaOf } = (await import(RULE_FILE)) as { IMPORT_UNITS: string[][]; areaOf: (rel: string) => string | null };

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    return e.isDirectory() ? tsFiles(rel) : rel.endsWith(".ts") ? [rel] : [];
  });
}

/** Area -> the other areas of src/core it imports, each with one file and specifier that does. */
function coreAreaGraph(files: readonly { rel: string; text: string }[]): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const { rel, text } of files) {
    const from = areaOf(rel);
    if (from === null) continue;
    const edges = graph.get(from) ?? new Map<string, string>();
    graph.set(from, edges);
    for (const { fileName: spec } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!spec.startsWith(".")) continue;
      const to = areaOf(path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec)));
      if (to === null || to === from || !to.startsWith("core/")) continue;
      if (!edges.has(to)) edges.set(to, `${rel} imports ${spec}`);
    }
  }
  return graph;
}

/** Every cycle of the graph as a path `a -> b -> ... -> a` with the import that makes each step (empty: none). */
function cyclesOf(graph: Map<string, Map<string, string>>): string[] {
  const out: string[] = [];
  const done = new Set<string>();
  const visit = (node: string, stack: string[]): void => {
    const at = stack.indexOf(node);
    if (at >= 0) {
      const loop = [...stack.slice(at), node];
      out.push(loop.map((n, i) => (i === 0 ? n : `-> ${n} (${graph.get(loop[i - 1] as string)?.get(n) ?? "?"})`)).join(" "));
      return;
    }
    if (done.has(node)) return;
    for (const next of graph.get(node)?.keys() ?? []) visit(next, [...stack, node]);
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) visit(node, []);
  return out;
}

describe("the areas of src/core form no import cycle", () => {
  it("finds a cycle when there is one (the check can fail)", () => {
    const graph = coreAreaGraph([
      { rel: "src/core/delegation/a.ts", text: 'import type { Finding } from "../evaluate/index.js";\n' },
      { rel: "src/core/evaluate/b.ts", text: 'export { x } from "../delegation/index.js";\n' },
      { rel: "src/core/money/c.ts", text: 'export type T = import("../time/index.js").Clock;\nimport { y } from "./d.js";\n' },
    ]);
    expect(cyclesOf(graph)).toEqual([expect.stringMatching(/^core\/delegation -> core\/evaluate \(.*\) -> core\/delegation \(.*\)$/)]);
  });

  it("src/core as it is: no cycle, so no area needs the IMPORT_UNITS exemption", () => {
    const files = tsFiles("src/core").map((rel) => ({ rel, text: readFileSync(path.join(ROOT, rel), "utf8") }));
    expect(files.length).toBeGreaterThan(50);
    const graph = coreAreaGraph(files);
    expect(graph.get("core/evaluate")?.has("core/delegation"), "the evaluator reads prepared delegations").toBe(true);
    expect(cyclesOf(graph)).toEqual([]);
    expect(IMPORT_UNITS).toEqual([]);
  });
});
