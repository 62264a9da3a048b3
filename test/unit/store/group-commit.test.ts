/**
 * The store's one group-commit queue (src/store/group-commit.ts) with a stand-in writer: rows
 * arriving within the gather window share a batch; a row that fails on its own rejects alone
 * while the rest of its batch is written; two rows of one key never share a batch; at most
 * `inFlight` batches are written at once (per lane: rows of different groups are queued
 * apart); `maxBatch` bounds a batch; "idle" windows let rows that waited for a busy slot go at
 * once; `drain` waits for everything.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { GroupCommitQueue, type GroupCommitOptions } from "../../../src/store/group-commit.js";

/** A writer whose batches wait for `release()`; `bad` rows make any batch holding them throw. */
function gated(bad: (n: number) => boolean = () => false) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  let open = 0;
  let most = 0;
  const write = async (items: number[]): Promise<number[]> => {
    batches.push(items);
    open++;
    most = Math.max(most, open);
    try {
      await new Promise<void>((r) => gates.push(r));
      if (items.some(bad)) throw new Error(`bad row in ${items.join(",")}`);
      return items.map((n) => n * 10);
    } finally {
      open--;
    }
  };
  /** Opens every gate as it comes until `p` settles (bounded), and gives its outcome. */
  const releaseUntil = async <T>(p: Promise<T>): Promise<T> => {
    let done = false;
    const watched = p.finally(() => (done = true));
    watched.catch(() => {});
    for (let i = 0; i < 5000 && !done; i++) {
      gates.splice(0).forEach((g) => g());
      await new Promise((r) => setImmediate(r));
    }
    expect(done).toBe(true);
    return watched;
  };
  return { write, batches, releaseUntil, pending: () => gates.length, most: () => most };
}

const base: GroupCommitOptions<number> = { maxBatch: 100, wait: 0, window: "every", inFlight: 1 };

/** Waits until `f()` holds, checking every turn of the event loop (bounded). */
async function until(f: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !f(); i++) await new Promise((r) => setImmediate(r));
  expect(f()).toBe(true);
}

describe("GroupCommitQueue", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("writes a batch's rows of different groups by separate writes, side by side, each isolated; one group's failing row fails only itself", async () => {
    const w = gated((n) => n === 21);
    const q = new GroupCommitQueue(w.write, { ...base, group: (n) => String(Math.floor(n / 10)) });
    const rows = [11, 21, 12, 22, 13];
    const settled = Promise.allSettled(rows.map((n) => q.add(n)));
    // Both groups' writes are in flight at once (one batch slot: inFlight 1).
    await until(() => w.pending() === 2);
    expect(w.batches).toEqual([
      [11, 12, 13],
      [21, 22],
    ]);
    const out = await w.releaseUntil(settled);
    expect(out.map((r) => (r.status === "fulfilled" ? r.value : "rejected"))).toEqual([110, "rejected", 120, 220, 130]);
    expect(w.most()).toBe(2);
  });

  it("queues each group in a lane of its own: a group whose write is slow never holds another group's next batch back", async () => {
    // A writer that answers group 2's batches at once and holds group 1's until released.
    const held: (() => void)[] = [];
    const batches: number[][] = [];
    const write = async (items: number[]): Promise<number[]> => {
      batches.push(items);
      if (items.some((n) => n < 20)) await new Promise<void>((r) => held.push(r));
      return items.map((n) => n * 10);
    };
    const q = new GroupCommitQueue(write, { ...base, group: (n) => String(Math.floor(n / 10)) });
    const slow = q.add(11);
    await until(() => held.length === 1);
    // Group 1's only slot (inFlight 1) is busy; group 2 writes batch after batch meanwhile.
    expect(await q.add(21)).toBe(210);
    expect(await q.add(22)).toBe(220);
    expect(await Promise.all([q.add(23), q.add(24)])).toEqual([230, 240]);
    const late = q.add(12); // waits for group 1's slot
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(q.inFlight).toBe(1);
    expect(q.waiting).toBe(1);
    let drained = false;
    const drain = q.drain().then(() => (drained = true));
    held.splice(0).forEach((r) => r());
    expect(await slow).toBe(110);
    await until(() => held.length === 1);
    expect(drained).toBe(false);
    held.splice(0).forEach((r) => r());
    expect(await late).toBe(120);
    await drain;
    expect(batches).toEqual([[11], [21], [22], [23, 24], [12]]);
    expect(q.inFlight).toBe(0);
    expect(q.waiting).toBe(0);
  });

  it("gives each lane laneInFlight slots of its own, and the rows without a group the queue's inFlight", async () => {
    const w = gated();
    const q = new GroupCommitQueue(w.write, { ...base, inFlight: 2, laneInFlight: 1, group: (n) => (n < 10 ? undefined : String(Math.floor(n / 10))) });
    const all: Promise<number>[] = [];
    for (const n of [11, 21, 1, 2]) {
      all.push(q.add(n));
      await until(() => w.pending() === all.length);
    }
    // Each lane holds its one slot: 12 and 22 wait; the rows without a group had two.
    all.push(q.add(12), q.add(22), q.add(3));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(w.batches).toEqual([[11], [21], [1], [2]]);
    expect(q.waiting).toBe(3);
    expect(q.inFlight).toBe(4);
    expect(await w.releaseUntil(Promise.all(all))).toEqual([110, 210, 10, 20, 120, 220, 30]);
    expect(w.batches.slice(4).sort()).toEqual([[12], [22], [3]].sort());
  });

  it("refuses a laneInFlight below one", () => {
    expect(() => new GroupCommitQueue(async (xs: number[]) => xs, { ...base, laneInFlight: 0 })).toThrow("laneInFlight must be a whole number at or above 1");
  });

  it("writes the rows that arrive within the gather window as one batch, and answers each with its own value", async () => {
    const w = gated();
    const q = new GroupCommitQueue(w.write, base);
    const all = Promise.all([1, 2, 3].map((n) => q.add(n)));
    expect(w.batches).toEqual([]); // still gathering
    await until(() => w.pending() === 1);
    expect(w.batches).toEqual([[1, 2, 3]]);
    expect(await w.releaseUntil(all)).toEqual([10, 20, 30]);
  });

  it("isolates a failing row: the others of its batch are written, only it rejects", async () => {
    const w = gated((n) => n === 4);
    const q = new GroupCommitQueue(w.write, base);
    const r = await w.releaseUntil(Promise.allSettled([1, 2, 3, 4, 5, 6, 7].map((n) => q.add(n))));
    expect(r.map((x) => x.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
    expect((r[3] as PromiseRejectedResult).reason).toEqual(new Error("bad row in 4"));
    expect((r[6] as PromiseFulfilledResult<number>).value).toBe(70);
    expect(w.batches[0]).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(w.batches).toContainEqual([4]);
  });

  it("never puts two rows of one key in one batch: the later waits, in order, for the next", async () => {
    const w = gated();
    const q = new GroupCommitQueue(w.write, { ...base, key: (n) => String(n % 3) });
    expect(await w.releaseUntil(Promise.all([1, 2, 4, 3, 7].map((n) => q.add(n))))).toEqual([10, 20, 40, 30, 70]);
    expect(w.batches).toEqual([[1, 2, 3], [4], [7]]);
  });

  it("writes at most maxBatch rows per batch", async () => {
    const w = gated();
    const q = new GroupCommitQueue(w.write, { ...base, maxBatch: 2 });
    await w.releaseUntil(Promise.all([1, 2, 3, 4, 5].map((n) => q.add(n))));
    expect(w.batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("has at most inFlight batches being written at once; the rows arriving meanwhile wait for a free slot", async () => {
    const w = gated();
    const q = new GroupCommitQueue(w.write, { ...base, inFlight: 2 });
    const first = q.add(1);
    await until(() => w.pending() === 1);
    const second = q.add(2);
    await until(() => w.pending() === 2);
    const rest = Promise.all([3, 4, 5].map((n) => q.add(n)));
    // Both slots busy: the rest waits.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(q.inFlight).toBe(2);
    expect(q.waiting).toBe(3);
    expect(w.batches).toEqual([[1], [2]]);
    expect(await w.releaseUntil(Promise.all([first, second, rest]))).toEqual([10, 20, [30, 40, 50]]);
    expect(w.batches).toEqual([[1], [2], [3, 4, 5]]);
    expect(w.most()).toBe(2);
  });

  it("with an idle window, takes the rows that waited for a busy slot at once; with every, they wait the window again", async () => {
    // Only timers are faked: a window passes when the test says so.
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    for (const window of ["idle", "every"] as const) {
      const w = gated();
      const q = new GroupCommitQueue(w.write, { ...base, wait: 5, window });
      const first = q.add(1);
      await vi.advanceTimersByTimeAsync(4);
      expect(w.batches).toEqual([]); // still within its window
      await vi.advanceTimersByTimeAsync(1);
      await until(() => w.pending() === 1);
      const second = q.add(2);
      await w.releaseUntil(first);
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      // idle: the second batch started as the first ended; every: only after its own window.
      expect(w.batches).toEqual(window === "idle" ? [[1], [2]] : [[1]]);
      await vi.advanceTimersByTimeAsync(5);
      expect(await w.releaseUntil(second)).toBe(20);
      expect(w.batches).toEqual([[1], [2]]);
    }
  });

  it("with a microtask window, writes a lone row within its tick; drain waits for everything queued and written", async () => {
    const w = gated();
    const q = new GroupCommitQueue(w.write, { ...base, wait: "microtask", window: "idle" });
    const a = q.add(1);
    const b = q.add(2);
    await Promise.resolve();
    expect(w.batches).toEqual([[1, 2]]);
    let drained = false;
    const d = q.drain().then(() => (drained = true));
    const c = q.add(3);
    await new Promise((r) => setImmediate(r));
    expect(drained).toBe(false);
    await w.releaseUntil(d);
    expect(await Promise.all([a, b, c])).toEqual([10, 20, 30]);
    expect(w.batches).toEqual([[1, 2], [3]]);
  });
});
