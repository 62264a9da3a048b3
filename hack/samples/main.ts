/**
 * Writes the sample manifests (`config/samples/`): Delegations, an IntentAgreement signed with
 * the PUBLIC sample keys, and a Subscription. Options:
 *   --at <RFC 3339>  date the samples from this instant (default: SAMPLE_AT, what is committed)
 *   --out <dir>      write there instead of config/samples
 *   --check          write nothing; exit 1 when config/samples differs
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SAMPLES_DIR, renderSamples } from "./render.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  if (v === undefined || v.startsWith("--")) throw new Error(`${name} needs a value`);
  return v;
}

async function main(args: string[]): Promise<number> {
  const at = option(args, "--at");
  const out = option(args, "--out");
  const check = args.includes("--check");
  const dir = out !== undefined ? resolve(out) : join(ROOT, SAMPLES_DIR);
  const files = await renderSamples(at);
  const stale: string[] = [];
  for (const f of files) {
    const path = join(dir, f.name);
    if (existsSync(path) && (await readFile(path, "utf8")) === f.content) continue;
    stale.push(f.name);
    if (!check) {
      await mkdir(dir, { recursive: true });
      await writeFile(path, f.content);
    }
  }
  if (check) {
    if (stale.length > 0) console.error(`stale samples in ${dir} (run npx tsx hack/samples/main.ts): ${stale.join(", ")}`);
    return stale.length > 0 ? 1 : 0;
  }
  console.log(stale.length > 0 ? `samples: wrote ${stale.map((s) => join(dir, s)).join(", ")}` : `samples: ${dir} up to date`);
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  console.error(`samples: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 2;
}
