/**
 * The adversarial model-based test (test/integration/adversary-model.test.ts) run longer than
 * in `npm test`: `npm run model:adversary [-- RUNS [COMMANDS [SECONDS]]]` (defaults 400 runs of
 * at most 30 commands, stopped after 1800 s). WRIT_ADVERSARY_KINDS selects command kinds; a
 * failure prints fast-check's counterexample and seed.
 */
import { runModelTest } from "./run.js";

runModelTest("test/integration/adversary-model.test.ts", { runs: "400", commands: "30", seconds: "1800" });
