/**
 * The money path's model-based test (test/integration/money-model.test.ts) run longer than in
 * `npm test`: `npm run model:money [-- RUNS [COMMANDS [SECONDS]]]` (defaults 1000 runs of at
 * most 120 commands, stopped after 1800 s). Same two `writ serve` processes on one Postgres, same
 * checks; a failure prints fast-check's counterexample and seed.
 */
import { runModelTest } from "./run.js";

runModelTest("test/integration/money-model.test.ts", { runs: "1000", commands: "120", seconds: "1800" });
