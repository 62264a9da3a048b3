/**
 * Group commit that isolates a failing row: the rows of several callers are written together
 * (one statement, or one transaction), and one caller's row that cannot be written must not
 * fail the others.
 *
 * `writeIsolated(rows, write)` calls `write` once with every row. When that call fails:
 * - with an error that says Postgres cannot be reached (`isDbUnavailable`: connection refused
 *   or lost, shutdown, too many connections), every row not yet written rejects with it at once
 *   (the caller answers 503); nothing is retried, which also never repeats a write whose
 *   COMMIT may have landed;
 * - with any other error (a data exception such as 22P02 for a lone surrogate in `jsonb`, a
 *   constraint, an entry the write itself refuses), the error may belong to one row, and the
 *   two halves are written apart, in order, and so on (bisection): every row that can be
 *   written is written, and a row that fails on its own rejects with its own error. A batch of
 *   n with one bad row costs about 2·log2(n) more calls; a call that fails as a whole (every
 *   row refused) at most 2n - 1.
 * Each row settles once: with its value from the call that wrote it (`write` returns one value
 * per row, in order), or with the error of the call it failed alone in. A call that returns
 * fewer values than rows rejects the rows left over (their write committed: never retried).
 */
import { isDbUnavailable } from "./db-errors.js";

/** One caller's row waiting in a batch, and how to answer it. */
export interface PendingRow<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes some rows together, all or none, and returns one value per row, in order. It throws
 * only when none was written (the statement or transaction failed): a throw is retried.
 */
export type RowsWriter<I, R> = (items: I[]) => Promise<readonly R[]>;

/** Writes `rows` with `write`, isolating failing rows (see the module comment). */
export async function writeIsolated<I, R>(rows: readonly PendingRow<I, R>[], write: RowsWriter<I, R>): Promise<void> {
  // Parts still to write, the next one last.
  const parts: (readonly PendingRow<I, R>[])[] = [rows];
  for (let part = parts.pop(); part !== undefined; part = parts.pop()) {
    if (part.length === 0) continue;
    let values: readonly R[];
    try {
      values = await write(part.map((r) => r.item));
    } catch (e) {
      if (isDbUnavailable(e)) {
        for (const rest of [part, ...parts]) for (const r of rest) r.reject(e);
        return;
      }
      if (part.length === 1) part[0]?.reject(e);
      else {
        const half = Math.ceil(part.length / 2);
        parts.push(part.slice(half), part.slice(0, half));
      }
      continue;
    }
    part.forEach((r, i) => (i < values.length ? r.resolve(values[i] as R) : r.reject(new Error("the batch write returned fewer values than rows"))));
  }
}
