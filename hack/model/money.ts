/**
 * The money path's model-based test (test/integration/money-model.test.ts) run longer than in
 * `npm test`: `npm run model:money [-- RUNS [COMMANDS [SECONDS]]]` (defaults 1000 runs of at
 * most 120 commands, stopped after 1800 s). Same two `writ serve` processes on one Postgres, same
 * checks; a failure prints fast-check's counterexample and seed.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const [runs = "1000", commands = "120", seconds = "1800"] = process.argv.slice(2);
const repo = fileURLToPath(new URL("../..", import.meta.url));
const r = spawnSync("npx", ["vitest", "run", "test/integration/money-model.test.ts"], {
  cwd: repo,
  stdio: "inherit",
  env: { ...process.env, WRIT_MODEL_RUNS: runs, WRIT_MODEL_COMMANDS: commands, WRIT_MODEL_SECONDS: seconds },
});
process.exit(r.status ?? 1);
