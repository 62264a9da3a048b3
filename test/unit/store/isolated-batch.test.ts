/**
 * Group commit that isolates a failing row (src/store/isolated-batch.ts), with a stand-in
 * writer: a failure that may be one row's is retried by halves, in order, down to the rows
 * that fail alone; a failure to reach the database rejects every row at once.
 */
import { describe, expect, it } from "vitest";
import { writeIsolated, type PendingRow } from "../../../src/store/isolated-batch.js";

/** Rows 0..n-1 whose outcomes are collected, and a writer that refuses any call holding a bad row. */
function world(n: number, refuse: (item: number) => Error | undefined) {
  const calls: number[][] = [];
  const outcomes: (string | undefined)[] = Array.from({ length: n }, () => undefined);
  const rows: PendingRow<number, string>[] = Array.from({ length: n }, (_, i) => ({
    item: i,
    resolve: (v) => (outcomes[i] = `ok ${v}`),
    reject: (e) => (outcomes[i] = `error ${(e as Error).message}`),
  }));
  const write = async (items: number[]) => {
    calls.push(items);
    const bad = items.map(refuse).find((e) => e !== undefined);
    if (bad) throw bad;
    return items.map((i) => `written ${i} with ${items.length - 1} others`);
  };
  return { rows, calls, outcomes, write };
}

const dataError = (i: number) => Object.assign(new Error(`row ${i} refused`), { code: "22P05" });

describe("writeIsolated", () => {
  it("writes everything in one call when nothing fails", async () => {
    const w = world(4, () => undefined);
    await writeIsolated(w.rows, w.write);
    expect(w.calls).toEqual([[0, 1, 2, 3]]);
    expect(w.outcomes).toEqual([0, 1, 2, 3].map((i) => `ok written ${i} with 3 others`));
  });

  it("bisects a failed call in order, so every other row is written and only the bad one rejects", async () => {
    const w = world(8, (i) => (i === 5 ? dataError(i) : undefined));
    await writeIsolated(w.rows, w.write);
    expect(w.calls).toEqual([[0, 1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 3], [4, 5, 6, 7], [4, 5], [4], [5], [6, 7]]);
    expect(w.outcomes).toEqual([
      "ok written 0 with 3 others",
      "ok written 1 with 3 others",
      "ok written 2 with 3 others",
      "ok written 3 with 3 others",
      "ok written 4 with 0 others",
      "error row 5 refused",
      "ok written 6 with 1 others",
      "ok written 7 with 1 others",
    ]);
  });

  it("rejects each of several bad rows with its own error", async () => {
    const w = world(5, (i) => (i === 0 || i === 3 ? dataError(i) : undefined));
    await writeIsolated(w.rows, w.write);
    expect(w.outcomes).toEqual([
      "error row 0 refused",
      "ok written 1 with 0 others",
      "ok written 2 with 0 others",
      "error row 3 refused",
      "ok written 4 with 0 others",
    ]);
  });

  it("rejects every row at once, without a retry, when the database cannot be reached", async () => {
    const down = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const w = world(6, () => down);
    await writeIsolated(w.rows, w.write);
    expect(w.calls).toEqual([[0, 1, 2, 3, 4, 5]]);
    expect(w.outcomes).toEqual(Array.from({ length: 6 }, () => "error connect ECONNREFUSED 127.0.0.1:5432"));
  });

  it("stops bisecting when the database is lost midway, rejecting the rows not yet written", async () => {
    const down = Object.assign(new Error("Connection terminated unexpectedly"), {});
    let lost = false;
    const w = world(4, (i) => (lost ? down : i === 0 ? ((lost = true), dataError(i)) : undefined));
    await writeIsolated(w.rows, w.write);
    // [0..3] fails on row 0 and the database goes away: the next call, [0, 1], is the last.
    expect(w.calls).toEqual([
      [0, 1, 2, 3],
      [0, 1],
    ]);
    expect(w.outcomes).toEqual(Array.from({ length: 4 }, () => "error Connection terminated unexpectedly"));
  });

  it("rejects the rows a successful call returned no value for, without writing them again", async () => {
    const calls: number[][] = [];
    const outcomes: string[] = [];
    const rows = [0, 1, 2].map((i): PendingRow<number, number> => ({
      item: i,
      resolve: (v) => outcomes.push(`ok ${v}`),
      reject: (e) => outcomes.push(`error ${(e as Error).message}`),
    }));
    await writeIsolated(rows, async (items) => (calls.push(items), items.slice(0, 2)));
    expect(calls).toEqual([[0, 1, 2]]);
    expect(outcomes).toEqual(["ok 0", "ok 1", "error the batch write returned fewer values than rows"]);
  });
});
