// @ts-check
/**
 * Imports across areas go through the area's index.ts (ESLint rule `areas/index-only`).
 *
 * An area is a folder with one public surface, its index.ts: src/core/<name> and
 * src/sources/<name> each, and every other top folder of src/ (store, verify, api, ...).
 * A relative `import`/`export ... from`/`import("...")` type in src/ that lands in another
 * area must land on that area's index.ts; within an area, modules import one another directly.
 * Dynamic `import()` is exempt: entry points load other areas lazily (`writ <verb>` loads only
 * what it runs). So are the entry points api, cli, controller and dev as targets: each is a whole
 * program, imported by the entry points above it for one thing, directly (an index would load
 * the whole program: `writ samples` would load the server). Which areas may import which is the other rule's table (hack/eslint/layers.js).
 *
 * IMPORT_UNITS: areas that import each other today, so their imports of each other stay deep
 * (an index would close a cycle). Shrink it, never grow it: a new pair means a new cycle.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Area pairs that import each other (each list: one cycle of areas). None: test/unit/lint/core-cycles.test.ts keeps it so. */
export const IMPORT_UNITS = [];

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The area of a repo-relative POSIX path under src/, or null. */
export function areaOf(rel) {
  if (!rel.startsWith("src/")) return null;
  const parts = rel.split("/");
  if (parts.length < 3) return null;
  if ((parts[1] === "core" || parts[1] === "sources") && parts.length >= 4) return parts.slice(1, 3).join("/");
  if (parts[1] === "core" || parts[1] === "sources") return rel.slice(4);
  return parts[1];
}

/** Entry points: imported directly, never through an index (see above). */
export const ENTRY_AREAS = ["api", "cli", "controller", "dev"];

const sameUnit = (a, b) => IMPORT_UNITS.some((u) => u.includes(a) && u.includes(b));

/** @type {import("eslint").Rule.RuleModule} */
const rule = {
  meta: {
    type: "problem",
    docs: { description: "Imports across areas of src/ go through the area's index.ts" },
    schema: [],
    messages: {
      deep: "'{{spec}}' reaches into src/{{to}}: import it from src/{{to}}/index.ts (add the export there if it is missing); only modules inside src/{{to}} import its files directly (hack/eslint/areas.js)",
    },
  },
  create(context) {
    const file = path.relative(ROOT, context.filename).split(path.sep).join("/");
    const from = areaOf(file);
    if (from === null) return {};
    function check(node, spec) {
      if (typeof spec !== "string" || !spec.startsWith(".")) return;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      const to = areaOf(target);
      if (to === null || to === from || sameUnit(from, to) || ENTRY_AREAS.includes(to)) return;
      const rest = target.slice(`src/${to}`.length);
      if (rest === "" || rest === "/" || /^\/index\.(js|ts)$/.test(rest)) return;
      context.report({ node, messageId: "deep", data: { spec, to } });
    }
    const lit = (n) => (n && n.type === "Literal" ? n.value : undefined);
    return {
      ImportDeclaration: (node) => check(node, lit(node.source)),
      ExportNamedDeclaration: (node) => node.source && check(node, lit(node.source)),
      ExportAllDeclaration: (node) => check(node, lit(node.source)),
      TSImportType: (node) => check(node, lit(node.source ?? node.argument?.literal)),
    };
  },
};

/** The local plugin: `areas/index-only`. */
export default { meta: { name: "areas" }, rules: { "index-only": rule } };
