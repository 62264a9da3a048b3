/**
 * Runs one model-based test file longer than `npm test` does (hack/model/money.ts,
 * hack/model/adversary.ts): `[RUNS [COMMANDS [SECONDS]]]` from the command line (else the
 * script's defaults) become WRIT_MODEL_RUNS, WRIT_MODEL_COMMANDS and WRIT_MODEL_SECONDS; exits
 * with vitest's status.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Runs `testFile` with the model settings; never returns. */
export function runModelTest(testFile: string, defaults: { runs: string; commands: string; seconds: string }): never {
  const [runs = defaults.runs, commands = defaults.commands, seconds = defaults.seconds] = process.argv.slice(2);
  const repo = fileURLToPath(new URL("../..", import.meta.url));
  const r = spawnSync("npx", ["vitest", "run", testFile], {
    cwd: repo,
    stdio: "inherit",
    env: { ...process.env, WRIT_MODEL_RUNS: runs, WRIT_MODEL_COMMANDS: commands, WRIT_MODEL_SECONDS: seconds },
  });
  process.exit(r.status ?? 1);
}
