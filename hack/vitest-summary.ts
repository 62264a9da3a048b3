/**
 * A vitest reporter that adds one plain closing line, `Tests: N passed, N failed, N skipped`,
 * after the default reporter's output, so any CI can read the totals without knowing vitest.
 * The line above it names the Node version the run used and its projects. With
 * WRIT_TEST_TOTALS_FILE set, the same figures are also written there as JSON
 * (`RunTotals`), for .ci/run to add up several runs (hack/ci/totals.ts).
 */
import { writeFileSync } from "node:fs";
import type { Reporter } from "vitest/reporters";

interface TaskLike {
  type?: string;
  mode?: string;
  projectName?: string;
  result?: { state?: string };
  tasks?: TaskLike[];
}

/** One run's figures, as written to WRIT_TEST_TOTALS_FILE. */
export interface RunTotals {
  node: string;
  projects: string[];
  passed: number;
  failed: number;
  skipped: number;
}

function count(tasks: readonly TaskLike[], out: { passed: number; failed: number; skipped: number }): void {
  for (const t of tasks) {
    if (t.tasks) count(t.tasks, out);
    if (t.type !== "test") continue;
    const state = t.result?.state;
    if (state === "pass") out.passed++;
    else if (state === "fail") out.failed++;
    else if (t.mode === "skip" || t.mode === "todo" || state === "skip") out.skipped++;
  }
}

export default class SummaryReporter implements Reporter {
  onFinished(files: readonly TaskLike[] = [], errors: readonly unknown[] = []): void {
    const totals = { passed: 0, failed: 0, skipped: 0 };
    count(files, totals);
    // Errors outside tests (a crashed file, an unhandled rejection) count as failures.
    const run: RunTotals = {
      node: process.version,
      projects: [...new Set(files.map((f) => f.projectName ?? ""))].filter(Boolean).sort(),
      ...totals,
      failed: totals.failed + errors.length,
    };
    const file = process.env.WRIT_TEST_TOTALS_FILE;
    if (file) writeFileSync(file, `${JSON.stringify(run)}\n`);
    console.log(`\nvitest ran on Node ${run.node}${run.projects.length ? ` (projects: ${run.projects.join(", ")})` : ""}`);
    console.log(`Tests: ${run.passed} passed, ${run.failed} failed${run.skipped ? `, ${run.skipped} skipped` : ""}`);
  }
}
