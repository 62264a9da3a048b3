/**
 * The areas rule (hack/eslint/areas.js) through the project's own eslint.config.js, on small
 * in-memory files placed in src/: an import that reaches past another area's index.ts is
 * reported, naming the index to use; the index itself, imports within an area and dynamic
 * imports are not.
 */
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const eslint = new ESLint({ cwd: ROOT });
/** The rule's table of areas that import each other (a plain JS module: loaded untyped). */
const RULE_FILE: string = "../../../hack/eslint/areas.js";
const { IMPORT_UNITS } = (await import(RULE_FILE)) as { IMPORT_UNITS: string[][] };

/** The `areas/index-only` messages for `code` as the file `file` (relative to the repository). */
async function areaErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${file}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === "areas/index-only").map((m) => m.message);
}

describe("areas/index-only", () => {
  it("reports a deep import of another top folder, naming its index", async () => {
    const errors = await areaErrors("src/verify/sample.ts", 'import type { Queryable } from "../store/pool.js";\nexport type Q = Queryable;\n');
    expect(errors).toEqual([expect.stringContaining("'../store/pool.js' reaches into src/store: import it from src/store/index.ts")]);
  });

  it("reports deep imports between the areas of core, re-exports and import types too", async () => {
    expect(await areaErrors("src/core/money/sample.ts", 'export { hashOf } from "../canonical/hash.js";\n')).toHaveLength(1);
    expect(await areaErrors("src/api/sample.ts", 'export type P = import("../store/pool.js").Queryable;\n')).toHaveLength(1);
    expect(await areaErrors("src/controller/sample.ts", 'export * from "../sources/kubernetes/client.js";\n')).toHaveLength(1);
  });

  it("allows the area's index, imports within an area, and dynamic imports", async () => {
    const code = [
      'import type { Queryable } from "../store/index.js";',
      'import { canonicalJson } from "../core/canonical/index.js";',
      'import { RevocationIndex } from "./revocation/index.js";',
      'import { x } from "./pipeline/decide.js";',
      'export const load = () => import("../store/migrate.js");',
      "export const all = [canonicalJson, RevocationIndex, x];",
      "export type T = Queryable;",
    ].join("\n");
    expect(await areaErrors("src/verify/sample.ts", code)).toEqual([]);
    expect(await areaErrors("src/store/ledger/sample.ts", 'export { x } from "../revocation/record.js";\n')).toEqual([]);
    // Entry points are imported directly: an index there would load the whole program.
    expect(await areaErrors("src/cli/sample.ts", 'export { x } from "../dev/samples.js";\n')).toEqual([]);
  });

  it("leaves deep imports between areas that import each other (IMPORT_UNITS), and only those", async () => {
    for (const unit of IMPORT_UNITS) {
      const [a, b] = unit as [string, string];
      expect(await areaErrors(`src/${a}/sample.ts`, `export type { X } from "../../${b}/types.js";\n`)).toEqual([]);
    }
    expect(await areaErrors("src/core/agreement/sample.ts", 'export type { X } from "../evaluate/types.js";\n')).toHaveLength(1);
  });
});
