/**
 * The period state of one spend batch (src/store/ledger/periods.ts): each spend's windows are
 * computed once (`periodSlot`), read once per distinct window (`windowInputs`), and checked
 * and counted from those (`RunningPeriods`), exactly as if the batch's earlier spends had
 * committed before. An owner with a rolling limit also counts each spend in the counter of its
 * UTC hour (read as a calendar window, so the write raises it in place when found).
 */
import { describe, expect, it } from "vitest";
import { preparePeriods, type PreparedPeriods } from "../../src/core/money/index.js";
import { periodSlot, RunningPeriods, usageByKey, windowInputs, type SpendPeriods } from "../../src/store/ledger/periods.js";

const BERLIN = preparePeriods(
  [
    { period: "day", amount: 100, count: 3 },
    { rolling: "PT1H", amount: 60 },
  ],
  "Europe/Berlin",
  "EUR",
) as PreparedPeriods;
const T0 = Date.parse("2026-03-29T00:30:00.000Z"); // 01:30 in Berlin, the day the clocks go forward
const intent = (amountMinor: bigint): SpendPeriods => ({ owner: "intent", currency: "EUR", amountMinor, periods: BERLIN });
const OWNER = JSON.stringify(["intent", "agent-1", "agr-1", "i1"]);

describe("the period state of a spend batch", () => {
  it("reads each distinct window once, with its bounds as the read takes them", () => {
    const a = periodSlot("agent-1", OWNER, "EUR", BERLIN, T0);
    const b = periodSlot("agent-1", OWNER, "EUR", BERLIN, T0);
    const other = periodSlot("agent-1", JSON.stringify(["intent", "agent-1", "agr-1", "i2"]), "EUR", BERLIN, T0);
    const { inputs, keys } = windowInputs([a, b, other]);
    expect(keys).toHaveLength(6);
    expect(inputs).toEqual([
      { k: 0, g: "agent-1", o: OWNER, c: "EUR", w: "day@Europe/Berlin", s: "2026-03-28T23:00:00.000Z" },
      // A rolling window: its bound (the read sums the UTC hours after the one holding it, and that hour's events after it).
      { k: 1, g: "agent-1", o: OWNER, c: "EUR", w: "rolling:3600000", since: "2026-03-28T23:30:00.000Z" },
      { k: 2, g: "agent-1", o: OWNER, c: "EUR", w: "bucket@PT1H", s: "2026-03-29T00:00:00.000Z" },
      { k: 3, g: "agent-1", o: other.owner, c: "EUR", w: "day@Europe/Berlin", s: "2026-03-28T23:00:00.000Z" },
      { k: 4, g: "agent-1", o: other.owner, c: "EUR", w: "rolling:3600000", since: "2026-03-28T23:30:00.000Z" },
      { k: 5, g: "agent-1", o: other.owner, c: "EUR", w: "bucket@PT1H", s: "2026-03-29T00:00:00.000Z" },
    ]);
    // A spec given as a plain owner computes the same windows and keys.
    expect(windowInputs([{ agentId: "agent-1", owner: OWNER, currency: "EUR", periods: BERLIN, atMs: T0 }])).toEqual(windowInputs([a]));
  });

  it("checks each spend against the read plus the batch's earlier spends, and counts it in exactly its windows", () => {
    const first = periodSlot("agent-1", OWNER, "EUR", BERLIN, T0);
    const second = periodSlot("agent-1", OWNER, "EUR", BERLIN, T0 + 60_000);
    const third = periodSlot("agent-1", OWNER, "EUR", BERLIN, T0 + 120_000);
    // One day window and one hour counter for the three (the same UTC hour), a rolling window
    // each (its bound moves with the instant).
    const { keys, inputs } = windowInputs([first, second, third]);
    expect(inputs.map((i) => i.w)).toEqual(["day@Europe/Berlin", "rolling:3600000", "bucket@PT1H", "rolling:3600000", "rolling:3600000"]);
    // The read found 30.00 EUR and one payment in the day; 10.00 EUR in each last hour, and in
    // the hour counter.
    const hour = { spent: "1000", payments: 1, oldest: new Date(T0 - 600_000).toISOString() };
    const run = new RunningPeriods(
      usageByKey(keys, [
        { k: 0, spent: "3000", payments: 1, oldest: null },
        { k: 1, ...hour },
        { k: 2, spent: "1000", payments: 1, oldest: null },
        { k: 3, ...hour },
        { k: 4, ...hour },
      ]),
    );
    expect(run.refusal(first, intent(4000n), "intent i1")).toBeUndefined();
    const row = run.add(first, "agr-1", "act-1", intent(4000n), new Date(T0).toISOString());
    expect(row).toEqual({
      g: "agent-1",
      a: "agr-1",
      x: "act-1",
      o: OWNER,
      c: "EUR",
      t: new Date(T0).toISOString(),
      m: "4000",
      // Its calendar window, and its hour's counter (a release takes it out of both).
      w: [
        ["day@Europe/Berlin", "2026-03-28T23:00:00.000Z"],
        ["bucket@PT1H", "2026-03-29T00:00:00.000Z"],
      ],
      // The day ends at midnight Berlin (CEST from 02:00: 22:00 UTC), after the hour's window.
      u: "2026-03-29T22:00:00.000Z",
      b: true,
    });
    // A minute later: the last hour holds 10.00 + 40.00, so 20.00 more breaks its 60.00.
    expect(run.refusal(second, intent(2000n), "intent i1")).toMatchObject({ reason: "PERIOD_LIMIT_EXCEEDED" });
    expect(run.refusal(second, intent(1000n), "intent i1")).toBeUndefined();
    run.add(second, "agr-1", "act-2", intent(1000n), new Date(T0 + 60_000).toISOString());
    // The day has counted three payments (one read, two in the batch): a fourth breaks its count.
    expect(run.refusal(third, intent(1n), "intent i1")).toMatchObject({ reason: "PERIOD_COUNT_EXCEEDED" });
    // The writes: one event per counted spend, and the day's counter and the hour's once each,
    // raised by the batch's sum in place (the read found them); the rolling window has no
    // counter of its own.
    const writes = run.writes();
    expect(writes.events.map((e) => [e.x, e.m])).toEqual([
      ["act-1", "4000"],
      ["act-2", "1000"],
    ]);
    expect(writes.counters).toEqual([
      { g: "agent-1", o: OWNER, c: "EUR", w: "day@Europe/Berlin", s: "2026-03-28T23:00:00.000Z", m: "5000", n: 2, e: true },
      { g: "agent-1", o: OWNER, c: "EUR", w: "bucket@PT1H", s: "2026-03-29T00:00:00.000Z", m: "5000", n: 2, e: true },
    ]);
    // Another owner's windows are its own.
    const elsewhere = periodSlot("agent-1", JSON.stringify(["intent", "agent-1", "agr-1", "i2"]), "EUR", BERLIN, T0 + 120_000);
    expect(run.refusal(elsewhere, intent(6000n), "intent i2")).toBeUndefined();
    // A window the read did not find is inserted.
    run.add(elsewhere, "agr-1", "act-3", intent(6000n), new Date(T0 + 120_000).toISOString());
    expect(run.writes().counters.slice(-2)).toMatchObject([
      { o: elsewhere.owner, w: "day@Europe/Berlin", m: "6000", n: 1, e: false },
      { o: elsewhere.owner, w: "bucket@PT1H", m: "6000", n: 1, e: false },
    ]);
  });

  it("gives an owner without a rolling limit no hour counter: its events are not bucketed", () => {
    const dayOnly = preparePeriods([{ period: "day", amount: 100 }], "Europe/Berlin", "EUR") as PreparedPeriods;
    const slot = periodSlot("agent-1", OWNER, "EUR", dayOnly, T0);
    expect(slot.bucket).toBeUndefined();
    expect(windowInputs([slot]).inputs.map((i) => i.w)).toEqual(["day@Europe/Berlin"]);
    const run = new RunningPeriods(new Map());
    const row = run.add(slot, "agr-1", "act-1", { owner: "intent", currency: "EUR", amountMinor: 100n, periods: dayOnly }, new Date(T0).toISOString());
    expect(row).toMatchObject({ w: [["day@Europe/Berlin", "2026-03-28T23:00:00.000Z"]], b: false });
    expect(run.writes().counters.map((c) => c.w)).toEqual(["day@Europe/Berlin"]);
  });
});
