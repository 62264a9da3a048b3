/**
 * The layers rule (hack/eslint/layers.js) through the project's own eslint.config.js, on small
 * in-memory files placed in src/: forbidden imports are reported with both layers and what is
 * allowed, allowed ones are not.
 */
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

/** The `writ/layers` messages for `code` as the file `file` (relative to the repository). */
async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${file}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === "writ/layers").map((m) => m.message);
}

describe("writ/layers", () => {
  it("reports store importing webhooks, naming both layers and what store may import", async () => {
    const errors = await layerErrors("src/store/sample.ts", 'import { x } from "../webhooks/x.js";\nexport const y = x;\n');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("src/store (layer store) may not import src/webhooks (layer webhooks)");
    expect(errors[0]).toContain("store may import core");
  });

  it("reports core importing the store, also from a nested folder", async () => {
    const errors = await layerErrors("src/core/money/sample.ts", 'import type { Queryable } from "../../store/pool.js";\nexport type Q = Queryable;\n');
    expect(errors).toEqual([expect.stringContaining("src/core (layer core) may not import src/store (layer store)")]);
    expect(errors[0]).toContain("core may import nothing outside its own folder");
  });

  it("allows imports down the table and within a layer", async () => {
    const code = [
      'import type { Queryable } from "../store/pool.js";',
      'import type { KubeObject } from "../sources/kubernetes/objects.js";',
      'import { canonicalJson } from "../core/canonical/index.js";',
      'import { RevocationIndex } from "./revocation-index.js";',
      "export const all = [canonicalJson, RevocationIndex];",
      "export type T = Queryable | KubeObject;",
    ].join("\n");
    expect(await layerErrors("src/verify/sample.ts", code)).toEqual([]);
    expect(await layerErrors("src/cli/sample.ts", 'export { devCommand } from "../dev/index.js";\n')).toEqual([]);
  });

  it("reports the API importing the controller and the controller importing the API", async () => {
    expect(await layerErrors("src/api/sample.ts", 'export { startController } from "../controller/manager.js";\n')).toEqual([
      expect.stringContaining("src/api (layer api) may not import src/controller (layer controller)"),
    ]);
    expect(await layerErrors("src/controller/sample.ts", 'export * from "../api/app.js";\n')).toHaveLength(1);
  });

  it("checks dynamic imports and import types", async () => {
    expect(await layerErrors("src/store/sample.ts", 'export const load = () => import("../api/app.js");\n')).toHaveLength(1);
    expect(await layerErrors("src/sources/sample.ts", 'export type V = typeof import("../verify/index.js");\n')).toHaveLength(1);
  });

  it("reports imports leaving src/ and folders missing from the table", async () => {
    expect(await layerErrors("src/store/sample.ts", 'export * from "../../hack/samples/manifests.js";\n')).toEqual([expect.stringContaining("leaves src/")]);
    expect(await layerErrors("src/store/sample.ts", 'export * from "../elsewhere/x.js";\n')).toEqual([expect.stringContaining("no layer of the table")]);
    expect(await layerErrors("src/elsewhere/sample.ts", "export const x = 1;\n")).toEqual([expect.stringContaining("no layer of the table")]);
  });

  it("keeps I/O packages out of core", async () => {
    expect(await layerErrors("src/core/sample.ts", 'import { readFileSync } from "node:fs";\nexport const r = readFileSync;\n')).toEqual([
      expect.stringContaining("core (layer core) may not import 'node:fs'"),
    ]);
    expect(await layerErrors("src/core/sample.ts", 'export type { Pool } from "pg";\n')).toHaveLength(1);
    expect(await layerErrors("src/core/sample.ts", 'import { createHash } from "node:crypto";\nexport const h = createHash;\n')).toEqual([]);
  });

  it("lets only the store import pg values; types are fine elsewhere", async () => {
    expect(await layerErrors("src/webhooks/sample.ts", 'import pg from "pg";\nexport const c = pg.Client;\n')).toEqual([
      expect.stringContaining("only src/store speaks SQL"),
    ]);
    expect(await layerErrors("src/store/sample.ts", 'import pg from "pg";\nexport const c = pg.Client;\n')).toEqual([]);
    const types = 'import type { Pool } from "pg";\nimport { type PoolClient } from "pg";\nexport type P = Pool | PoolClient;\n';
    expect(await layerErrors("src/verify/sample.ts", types)).toEqual([]);
  });

  it("leaves files outside src/ alone", async () => {
    expect(await layerErrors("test/unit/sample.ts", 'export * from "../../src/api/app.js";\n')).toEqual([]);
  });
});
