/**
 * `npm run gen:crds`: writes the CRDs generated from src/core/schemas to `crds/` and
 * `charts/writ/crds/`, and deletes generated files no kind produces any more.
 * `--check`: writes nothing; exits 1 and names the stale files when the folders differ.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CRD_DIRS, GENERATED_FILE, renderCrdFiles } from "./render.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

async function main(args: string[]): Promise<number> {
  const check = args.includes("--check");
  const files = renderCrdFiles();
  const wanted = new Set(files.map((f) => f.path));
  const stale: string[] = [];
  for (const f of files) {
    const path = join(ROOT, f.path);
    const current = existsSync(path) ? await readFile(path, "utf8") : undefined;
    if (current === f.content) continue;
    stale.push(f.path);
    if (!check) {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, f.content);
    }
  }
  for (const dir of CRD_DIRS) {
    const names = existsSync(join(ROOT, dir)) ? await readdir(join(ROOT, dir)) : [];
    for (const name of names) {
      const rel = `${dir}/${name}`;
      if (!GENERATED_FILE.test(name) || wanted.has(rel)) continue;
      stale.push(rel);
      if (!check) await rm(join(ROOT, rel));
    }
  }
  if (check) {
    if (stale.length > 0) console.error(`stale CRD files (run npm run gen:crds):\n  ${stale.join("\n  ")}`);
    return stale.length > 0 ? 1 : 0;
  }
  console.log(stale.length > 0 ? `gen:crds: wrote ${stale.join(", ")}` : "gen:crds: up to date");
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
