/**
 * `npm run gen:samples`: writes the REFERENCE copies of the samples in config/samples/ (fixed
 * time SAMPLE_AT, plain ids) from the renderer in src (src/core/samples, src/manifests/samples.ts).
 * They have lapsed by design; fresh, applicable samples come from `writ samples --out <dir>`.
 *   --check   write nothing; exit 1 when config/samples differs
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderSamples } from "../../src/manifests/samples.js";

const DIR = fileURLToPath(new URL("../../config/samples/", import.meta.url));

async function main(args: string[]): Promise<number> {
  const check = args.includes("--check");
  const stale: string[] = [];
  for (const f of await renderSamples()) {
    const path = join(DIR, f.name);
    if (existsSync(path) && (await readFile(path, "utf8")) === f.content) continue;
    stale.push(f.name);
    if (!check) {
      await mkdir(DIR, { recursive: true });
      await writeFile(path, f.content);
    }
  }
  if (check) {
    if (stale.length > 0) console.error(`stale samples in ${DIR} (run npm run gen:samples): ${stale.join(", ")}`);
    return stale.length > 0 ? 1 : 0;
  }
  console.log(stale.length > 0 ? `samples: wrote ${stale.map((s) => join(DIR, s)).join(", ")}` : `samples: ${DIR} up to date`);
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  console.error(`samples: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 2;
}
