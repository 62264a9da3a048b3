/**
 * The closing lines of .ci/run: one line per test run (its Node version, projects and totals,
 * from the JSON hack/vitest-summary.ts writes to WRIT_TEST_TOTALS_FILE), then their sum as the
 * plain `Tests: N passed, N failed` line that CI reads. Arguments: one `name:exit-status:file`
 * per run. A run that exited non-zero without a failed test (it stopped before its tests, at
 * the type check or the linter, or vitest itself crashed) counts as one failure, so the sum
 * never reads as a pass when a run did not.
 */
import { readFileSync } from "node:fs";
import type { RunTotals } from "../vitest-summary.js";

const sum = { passed: 0, failed: 0, skipped: 0 };
console.log("\n== All test runs");
for (const arg of process.argv.slice(2)) {
  const [name = "", status = "", ...rest] = arg.split(":");
  const file = rest.join(":");
  let run: RunTotals | undefined;
  try {
    run = JSON.parse(readFileSync(file, "utf8")) as RunTotals;
  } catch {
    run = undefined;
  }
  const exit = Number(status);
  let failed = run?.failed ?? 0;
  let note = "";
  if (exit !== 0 && failed === 0) {
    failed = 1;
    note = run ? `; exited ${exit} with no failed test: counted as 1 failed` : `; exited ${exit} before reporting its tests: counted as 1 failed`;
  }
  const where = run ? `Node ${run.node}, ${run.projects.join(" + ") || "no project"}` : "no totals";
  console.log(`  ${name} (${where}): passed ${run?.passed ?? 0}, failed ${failed}, skipped ${run?.skipped ?? 0}${note}`);
  sum.passed += run?.passed ?? 0;
  sum.failed += failed;
  sum.skipped += run?.skipped ?? 0;
}
console.log(`Tests: ${sum.passed} passed, ${sum.failed} failed${sum.skipped ? `, ${sum.skipped} skipped` : ""}`);
