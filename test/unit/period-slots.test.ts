/**
 * The period state of one spend batch (src/store/ledger/periods.ts): each spend's windows are
 * computed once (`periodSlot`), read once per distinct window (`windowInputs`), and checked
 * and counted from those (`RunningPeriods`), exactly as if the batch's earlier spends had
 * committed before. Once a rolling window holds HOUR_COUNTERS_FROM payments, its owner's spends
 * are also counted in their UTC hour's counter.
 */
import { describe, expect, it } from "vitest";
import { preparePeriods, type PreparedPeriods } from "../../src/core/money/index.js";
import { HOUR_COUNTERS_FROM, periodSlot, RunningPeriods, usageByKey, windowInputs, type SpendPeriods } from "../../src/store/ledger/periods.js";

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
    expect(keys).toHaveLength(4);
    expect(inputs).toEqual([
      { k: 0, g: "agent-1", o: OWNER, c: "EUR", w: "day@Europe/Berlin", s: "2026-03-28T23:00:00.000Z" },
      { k: 1, g: "agent-1", o: OWNER, c: "EUR", w: "rolling:3600000", since: "2026-03-28T23:30:00.000Z" },
      { k: 2, g: "agent-1", o: other.owner, c: "EUR", w: "day@Europe/Berlin", s: "2026-03-28T23:00:00.000Z" },
      { k: 3, g: "agent-1", o: other.owner, c: "EUR", w: "rolling:3600000", since: "2026-03-28T23:30:00.000Z" },
    ]);
    // A spec given as a plain owner computes the same windows and keys.
    expect(windowInputs([{ agentId: "agent-1", owner: OWNER, currency: "EUR", periods: BERLIN, atMs: T0 }])).toEqual(windowInputs([a]));
  });

  it("checks each spend against the read plus the batch's earlier spends, and counts it in exactly its windows", () => {
    const first = periodSlot("agent-1", OWNER, "EUR", BERLIN, T0);
    const second = periodSlot("agent-1", OWNER, "EUR", BERLIN, T0 + 60_000);
    const third = periodSlot("agent-1", OWNER, "EUR", BERLIN, T0 + 120_000);
    // One day window for the three, a rolling window each (its bound moves with the instant).
    const { keys, inputs } = windowInputs([first, second, third]);
    expect(inputs.map((i) => i.w)).toEqual(["day@Europe/Berlin", "rolling:3600000", "rolling:3600000", "rolling:3600000"]);
    // The read found 30.00 EUR and one payment in the day; 10.00 EUR in each last hour.
    const hour = { spent: "1000", payments: 1, oldest: new Date(T0 - 600_000).toISOString() };
    const run = new RunningPeriods(
      usageByKey(keys, [
        { k: 0, spent: "3000", payments: 1, oldest: null },
        { k: 1, ...hour },
        { k: 2, ...hour },
        { k: 3, ...hour },
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
      w: [["day@Europe/Berlin", "2026-03-28T23:00:00.000Z"]],
      // The day ends at midnight Berlin (CEST from 02:00: 22:00 UTC), after the hour's window.
      u: "2026-03-29T22:00:00.000Z",
      // Two payments in the last hour: not counted in its UTC hour.
      b: false,
    });
    // A minute later: the last hour holds 10.00 + 40.00, so 20.00 more breaks its 60.00.
    expect(run.refusal(second, intent(2000n), "intent i1")).toMatchObject({ reason: "PERIOD_LIMIT_EXCEEDED" });
    expect(run.refusal(second, intent(1000n), "intent i1")).toBeUndefined();
    run.add(second, "agr-1", "act-2", intent(1000n), new Date(T0 + 60_000).toISOString());
    // The day has counted three payments (one read, two in the batch): a fourth breaks its count.
    expect(run.refusal(third, intent(1n), "intent i1")).toMatchObject({ reason: "PERIOD_COUNT_EXCEEDED" });
    // The writes: one event per counted spend, and the day's counter once, raised by the
    // batch's sum in place (the read found it); the rolling window has no counter.
    const writes = run.writes();
    expect(writes.events.map((e) => [e.x, e.m])).toEqual([
      ["act-1", "4000"],
      ["act-2", "1000"],
    ]);
    expect(writes.counters).toEqual([{ g: "agent-1", o: OWNER, c: "EUR", w: "day@Europe/Berlin", s: "2026-03-28T23:00:00.000Z", m: "5000", n: 2, e: true }]);
    // Another owner's windows are its own.
    const elsewhere = periodSlot("agent-1", JSON.stringify(["intent", "agent-1", "agr-1", "i2"]), "EUR", BERLIN, T0 + 120_000);
    expect(run.refusal(elsewhere, intent(6000n), "intent i2")).toBeUndefined();
    // A window the read did not find is inserted.
    run.add(elsewhere, "agr-1", "act-3", intent(6000n), new Date(T0 + 120_000).toISOString());
    expect(run.writes().counters.at(-1)).toMatchObject({ o: elsewhere.owner, m: "6000", n: 1, e: false });
  });

  it("counts a spend in its UTC hour's counter once a rolling window holds HOUR_COUNTERS_FROM payments with it, never an owner without one", () => {
    const first = periodSlot("agent-1", OWNER, "EUR", BERLIN, T0);
    const second = periodSlot("agent-1", OWNER, "EUR", BERLIN, T0 + 60_000);
    const { keys } = windowInputs([first, second]);
    // The read found two payments fewer than the bound in the first spend's last hour, and
    // in the second's (the hour counter is never read: it is inserted, or raised on conflict).
    const full = { spent: "0", payments: HOUR_COUNTERS_FROM - 2, oldest: new Date(T0 - 600_000).toISOString() };
    const run = new RunningPeriods(
      usageByKey(keys, [
        { k: 1, ...full },
        { k: 2, ...full },
      ]),
    );
    const small = (m: bigint): SpendPeriods => ({ owner: "intent", currency: "EUR", amountMinor: m, periods: BERLIN });
    // With it, the window holds HOUR_COUNTERS_FROM - 1: not yet.
    expect(run.add(first, "agr-1", "act-1", small(1n), new Date(T0).toISOString())).toMatchObject({
      b: false,
      w: [["day@Europe/Berlin", "2026-03-28T23:00:00.000Z"]],
    });
    // The batch's first spend makes it HOUR_COUNTERS_FROM with this one: counted in the hour
    // 00:00Z (a release takes it out of it).
    expect(run.add(second, "agr-1", "act-2", small(2n), new Date(T0 + 60_000).toISOString())).toMatchObject({
      b: true,
      w: [
        ["day@Europe/Berlin", "2026-03-28T23:00:00.000Z"],
        ["bucket@PT1H", "2026-03-29T00:00:00.000Z"],
      ],
    });
    expect(run.writes().counters.map((c) => [c.w, c.s, c.m, c.n, c.e])).toEqual([
      ["day@Europe/Berlin", "2026-03-28T23:00:00.000Z", "3", 2, false],
      ["bucket@PT1H", "2026-03-29T00:00:00.000Z", "2", 1, false],
    ]);
    // An owner with calendar limits alone has no hour counter, however many payments.
    const dayOnly = preparePeriods([{ period: "day", count: 1000 }], "Europe/Berlin", "EUR") as PreparedPeriods;
    const slot = periodSlot("agent-1", OWNER, "EUR", dayOnly, T0);
    expect(slot.bucket).toBeUndefined();
    const day = new RunningPeriods(usageByKey(windowInputs([slot]).keys, [{ k: 0, spent: "0", payments: 500, oldest: null }]));
    expect(day.add(slot, "agr-1", "act-3", { owner: "intent", currency: "EUR", amountMinor: 1n, periods: dayOnly }, new Date(T0).toISOString())).toMatchObject({
      b: false,
    });
  });
});
