/**
 * A vitest reporter that adds one plain closing line, `Tests: N passed, N failed, N skipped`,
 * after the default reporter's output, so any CI can read the totals without knowing vitest.
 */
import type { Reporter } from "vitest/reporters";

interface TaskLike {
  type?: string;
  mode?: string;
  result?: { state?: string };
  tasks?: TaskLike[];
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
    const failed = totals.failed + errors.length;
    console.log(`\nTests: ${totals.passed} passed, ${failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ""}`);
  }
}
