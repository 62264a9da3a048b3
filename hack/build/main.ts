/**
 * `npm run build`: the production build. Compiles src/ to dist/ with tsc
 * (tsconfig.build.json: ES modules, imports already end in .js, so plain node runs the output)
 * and copies every other file under src/ that the code reads at run time (today the SQL
 * migrations in src/store/migrations and functions in src/store/sql/functions, found through
 * `new URL(..., import.meta.url)`) to the
 * same place under dist/. dist/ is emptied first, so nothing from an older build survives.
 * bin/writ.mjs runs dist/cli/main.js where src/ is absent (the image); see its header.
 * `--out DIR` writes the build to DIR instead of dist/ (the production-install test does).
 */
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const SRC = join(REPO, "src");
const { values } = parseArgs({ options: { out: { type: "string" } } });
const DIST = values.out === undefined ? join(REPO, "dist") : resolve(values.out);

/** Files under `dir` (recursively) that tsc does not emit: everything but .ts sources. */
function assetsUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

// The output folder is emptied: refuse one that holds the repository or lies inside src/.
if (!relative(DIST, REPO).startsWith("..") || !relative(SRC, DIST).startsWith("..")) {
  console.error(`build: refusing to write to ${DIST} (it holds the repository or is inside src/)`);
  process.exit(2);
}
rmSync(DIST, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const r = spawnSync(process.execPath, [tsc, "-p", join(REPO, "tsconfig.build.json"), "--outDir", DIST], { cwd: REPO, stdio: "inherit" });
if (r.status !== 0) {
  console.error(`build: tsc failed (exit ${r.status ?? r.signal})`);
  process.exit(1);
}
const assets = assetsUnder(SRC);
for (const file of assets) cpSync(file, join(DIST, relative(SRC, file)));
console.log(`build: ${relative(REPO, DIST) || "."} written (${assets.length} asset file(s) copied from src/)`);
