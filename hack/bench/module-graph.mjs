// `node hack/bench/module-graph.mjs <entry.js> <list file>`: imports the entry (no call of what
// it exports) and writes {ms, files} to `<list file>.json`: the import's wall time and the
// paths of the modules it loaded, ES modules (from the loader hooks' list) and CommonJS ones
// (require.cache). Used by hack/bench/startup.ts.
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { performance } from "node:perf_hooks";
import { createRequire, register } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const [entry, file] = process.argv.slice(2);
register("./module-graph-hooks.mjs", import.meta.url, { data: { file } });
const t0 = performance.now();
await import(pathToFileURL(entry).href);
const ms = performance.now() - t0;
const esm = readFileSync(file, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((u) => fileURLToPath(u));
const cjs = Object.keys(createRequire(import.meta.url).cache);
writeFileSync(`${file}.json`, JSON.stringify({ ms, files: [...new Set([...esm, ...cjs])] }));
process.exit(0);
