/**
 * The append batcher of POST /v1/log/entries, with a stand-in writer: appends arriving while a
 * batch is written join the next batch, in arrival order; each caller gets its own entry and
 * its batch's head; a batch that cannot reach the database rejects only its own callers; a
 * batch that fails otherwise is written again by halves, so only the entry that fails alone
 * is rejected; drain waits for the queue. Then with the real store on Postgres: an entry that
 * Postgres refuses, or that cannot be built, fails alone and the log stays one chain.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSigner } from "../../src/core/jose/index.js";
import { LogEntryError, verifyLogLink, type LogEntry, type TreeHead } from "../../src/core/tlog/index.js";
import { appendQueue, type AppendQueue, type BatchedAppend } from "../../src/api/routes/log/batcher.js";
import { appendToLog, type LogAppendInput, type LogAppendResult } from "../../src/store/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

/**
 * A writer that records its batches and answers after `release()` is called for each; a
 * batch for which `fail(nth, ns)` returns an error throws it.
 */
function gatedWriter(fail: (nth: number, ns: number[]) => Error | undefined = () => undefined) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  let size = 0;
  const write = async (inputs: LogAppendInput[]): Promise<LogAppendResult> => {
    const ns = inputs.map((i) => i.body.n as number);
    const nth = batches.push(ns) - 1;
    await new Promise<void>((r) => gates.push(r));
    const error = fail(nth, ns);
    if (error) throw error;
    const entries = inputs.map((input) => ({ kind: input.kind, sequence: ++size, body: input.body }) as unknown as LogEntry);
    return { entries, head: { tree_size: size } as unknown as TreeHead, checkpoint: null };
  };
  const releaseAll = async () => {
    for (let i = 0; i < 100 && (gates.length > 0 || i < 3); i++) {
      gates.splice(0).forEach((g) => g());
      await new Promise((r) => setImmediate(r));
    }
  };
  return { write, batches, releaseAll, pending: () => gates.length };
}

const input = (n: number): LogAppendInput => ({ kind: "incident", body: { n } });

describe("appendQueue", () => {
  it("writes a lone append at once and queues the ones arriving meanwhile into the next batch", async () => {
    const w = gatedWriter();
    const seen: number[] = [];
    const b = appendQueue(w.write, 500, (n) => seen.push(n));
    const first = b.add(input(0));
    await new Promise((r) => setImmediate(r));
    expect(w.batches).toEqual([[0]]);
    const rest = [1, 2, 3, 4].map((n) => b.add(input(n)));
    await new Promise((r) => setImmediate(r));
    expect(w.batches).toEqual([[0]]); // still writing the first
    await w.releaseAll();
    const answers = await Promise.all([first, ...rest]);
    expect(w.batches).toEqual([[0], [1, 2, 3, 4]]);
    expect(seen).toEqual([1, 4]);
    expect(answers.map((a) => a.entry.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(answers.map((a) => a.entry.body.n)).toEqual([0, 1, 2, 3, 4]);
    expect(answers.map((a) => a.head.tree_size)).toEqual([1, 5, 5, 5, 5]);
  });

  it("caps a batch at maxBatch", async () => {
    const w = gatedWriter();
    const b = appendQueue(w.write, 3);
    const all = Array.from({ length: 8 }, (_, n) => b.add(input(n)));
    await w.releaseAll();
    await Promise.all(all);
    expect(w.batches).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [6, 7],
    ]);
  });

  it("rejects every caller of a batch that cannot reach the database, without a retry, and goes on with the next", async () => {
    const down = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const w = gatedWriter((nth) => (nth === 1 ? down : undefined));
    const b = appendQueue(w.write);
    const first = b.add(input(0));
    await new Promise((r) => setImmediate(r));
    const second = [b.add(input(1)), b.add(input(2))];
    const results = Promise.allSettled([first, ...second]);
    await w.releaseAll();
    const third = b.add(input(3));
    await w.releaseAll();
    expect((await results).map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected"]);
    expect((await third).entry.body.n).toBe(3);
    expect((await third).entry.sequence).toBe(2);
    expect(w.batches).toEqual([[0], [1, 2], [3]]);
  });

  it("writes the halves of a batch that failed otherwise apart, in order, rejecting only the entry that fails alone", async () => {
    const w = gatedWriter((_nth, ns) => (ns.includes(2) ? new Error("entry 2 refused") : undefined));
    const seen: number[] = [];
    const b = appendQueue(w.write, 500, (n) => seen.push(n));
    const first = b.add(input(0));
    await new Promise((r) => setImmediate(r));
    const rest = [1, 2, 3, 4].map((n) => b.add(input(n)));
    const settled = Promise.allSettled([first, ...rest]);
    await w.releaseAll();
    const results = await settled;
    expect(w.batches).toEqual([[0], [1, 2, 3, 4], [1, 2], [1], [2], [3, 4]]);
    expect(
      results.map((r) => (r.status === "fulfilled" ? [r.value.entry.body.n, r.value.entry.sequence, r.value.head.tree_size] : (r.reason as Error).message)),
    ).toEqual([[0, 1, 1], [1, 2, 2], "entry 2 refused", [3, 3, 4], [4, 4, 4]]);
    expect(seen).toEqual([1, 1, 2]); // one size per signed head written
  });

  it("drain resolves once nothing is queued or being written", async () => {
    const w = gatedWriter();
    const b = appendQueue(w.write);
    const appended = [b.add(input(0)), b.add(input(1))];
    let drained = false;
    const d = b.drain().then(() => (drained = true));
    await new Promise((r) => setImmediate(r));
    expect(drained).toBe(false);
    await w.releaseAll();
    await d;
    await Promise.all(appended);
    expect(drained).toBe(true);
    expect(w.pending()).toBe(0);
  });
});

describe("appendQueue on the log store (Postgres)", () => {
  let db: TestDatabase;
  const signer = generateSigner();
  /** Sizes of the appends sent to the store, in order. */
  const writes: number[] = [];
  let batcher: AppendQueue;

  beforeAll(async () => {
    db = await createTestDatabase();
    // A row Postgres itself refuses (23514), as any row-specific failure inside the statement.
    await db.pool.query("ALTER TABLE log_entries ADD CONSTRAINT test_refused_body CHECK (strpos(body, 'refused-by-postgres') = 0)");
    batcher = appendQueue(async (inputs) => {
      writes.push(inputs.length);
      return appendToLog(db.pool, inputs, signer);
    });
  });
  afterAll(async () => {
    await batcher?.drain();
    await db?.drop();
  });

  /** Appends `inputs` together (one first batch) and answers each caller's outcome. */
  async function appendTogether(inputs: LogAppendInput[]): Promise<PromiseSettledResult<BatchedAppend>[]> {
    writes.length = 0;
    const results = await Promise.allSettled(inputs.map((i) => batcher.add(i)));
    expect(writes[0]).toBe(inputs.length); // they shared the first transaction
    return results;
  }

  /** The stored bodies' `n`, by sequence. */
  async function storedNs(): Promise<number[]> {
    const { rows } = await db.pool.query<{ body: string }>("SELECT body FROM log_entries ORDER BY sequence");
    return rows.map((r) => (JSON.parse(r.body) as { n: number }).n);
  }

  /** Each answered entry follows the one before it, and is under the head it was answered with. */
  function expectOneChain(answers: BatchedAppend[], before: LogEntry | undefined): void {
    let prev = before;
    for (const a of answers) {
      expect(verifyLogLink(prev, a.entry)).toBeUndefined();
      expect(a.head.tree_size).toBeGreaterThanOrEqual(a.entry.sequence);
      prev = a.entry;
    }
  }

  it("writes every other append of a batch in which Postgres refuses one entry, in arrival order, and rejects only that one", async () => {
    const inputs = [0, 1, 2, 3, 4, 5, 6].map((n) => (n === 4 ? { kind: "incident" as const, body: { n, note: "refused-by-postgres" } } : input(n)));
    const results = await appendTogether(inputs);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect(((results[4] as PromiseRejectedResult).reason as { code?: string }).code).toBe("23514");
    const answers = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    expect(answers.map((a) => [a.entry.body.n, a.entry.sequence])).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [5, 5],
      [6, 6],
    ]);
    expectOneChain(answers, undefined);
    expect(await storedNs()).toEqual([0, 1, 2, 3, 5, 6]);
  });

  it("writes every other append of a batch in which one entry cannot be built (a lone surrogate), rejecting only that one", async () => {
    const tip = (await batcher.add(input(7))).entry;
    const inputs = [8, 9, 10].map((n) => (n === 9 ? { kind: "incident" as const, body: { n, lone: "\ud800x" } } : input(n)));
    const results = await appendTogether(inputs);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const refused = (results[1] as PromiseRejectedResult).reason as Error;
    expect(refused).toBeInstanceOf(LogEntryError);
    expect(refused.message).toBe("body.lone must not contain a lone surrogate");
    expectOneChain(
      results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : [])),
      tip,
    );
    expect((await storedNs()).slice(-3)).toEqual([7, 8, 10]);
  });
});
