/**
 * The append batcher of POST /v1/log/entries with a stand-in writer: appends arriving while a
 * batch is written join the next batch, in arrival order; each caller gets its own entry and
 * its batch's head; a failing batch rejects only its own callers; drain waits for the queue.
 */
import { describe, expect, it } from "vitest";
import type { LogEntry, TreeHead } from "../../src/core/tlog/index.js";
import { AppendBatcher } from "../../src/api/routes/log/batcher.js";
import type { LogAppendInput, LogAppendResult } from "../../src/store/log.js";

/** A writer that records its batches and answers after `release()` is called for each. */
function gatedWriter(failBatch?: number) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  let size = 0;
  const write = async (inputs: LogAppendInput[]): Promise<LogAppendResult> => {
    const nth = batches.push(inputs.map((i) => i.body.n as number)) - 1;
    await new Promise<void>((r) => gates.push(r));
    if (nth === failBatch) throw new Error(`batch ${nth} failed`);
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

describe("AppendBatcher", () => {
  it("writes a lone append at once and queues the ones arriving meanwhile into the next batch", async () => {
    const w = gatedWriter();
    const seen: number[] = [];
    const b = new AppendBatcher(w.write, 500, (n) => seen.push(n));
    const first = b.append(input(0));
    await new Promise((r) => setImmediate(r));
    expect(w.batches).toEqual([[0]]);
    const rest = [1, 2, 3, 4].map((n) => b.append(input(n)));
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
    const b = new AppendBatcher(w.write, 3);
    const all = Array.from({ length: 8 }, (_, n) => b.append(input(n)));
    await w.releaseAll();
    await Promise.all(all);
    expect(w.batches).toEqual([[0, 1, 2], [3, 4, 5], [6, 7]]);
  });

  it("rejects only the callers of a failed batch and goes on with the next", async () => {
    const w = gatedWriter(1);
    const b = new AppendBatcher(w.write);
    const first = b.append(input(0));
    await new Promise((r) => setImmediate(r));
    const second = [b.append(input(1)), b.append(input(2))];
    const results = Promise.allSettled([first, ...second]);
    await w.releaseAll();
    const third = b.append(input(3));
    await w.releaseAll();
    expect((await results).map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected"]);
    expect((await third).entry.body.n).toBe(3);
    expect((await third).entry.sequence).toBe(2);
  });

  it("drain resolves once nothing is queued or being written", async () => {
    const w = gatedWriter();
    const b = new AppendBatcher(w.write);
    const appended = [b.append(input(0)), b.append(input(1))];
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
