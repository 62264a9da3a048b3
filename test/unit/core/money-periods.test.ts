/**
 * Limits per period, the core's rule (src/core/money/periods.ts): calendar windows in a time zone
 * with DST (23- and 25-hour days, a day whose midnight does not exist), ISO weeks from Monday,
 * months, quarters, years, rolling windows, the checks and the budget line.
 */
import { describe, expect, it } from "vitest";
import {
  calendarWindow,
  checkPeriod,
  mandatePeriods,
  parseRollingDuration,
  periodLine,
  preparePeriods,
  windowAt,
  formatMinor,
  type CalendarPeriod,
} from "../../../src/core/money/index.js";

const at = (iso: string) => Date.parse(iso);
const win = (period: CalendarPeriod, tz: string, iso: string) => {
  const w = calendarWindow(period, tz, at(iso));
  return [new Date(w.start).toISOString(), w.end === undefined ? undefined : new Date(w.end).toISOString()];
};

describe("calendar windows", () => {
  it("a Berlin day is 23 hours on the spring change and 25 on the autumn one", () => {
    expect(win("day", "Europe/Berlin", "2026-03-29T12:00:00Z")).toEqual(["2026-03-28T23:00:00.000Z", "2026-03-29T22:00:00.000Z"]);
    expect(win("day", "Europe/Berlin", "2026-10-25T12:00:00Z")).toEqual(["2026-10-24T22:00:00.000Z", "2026-10-25T23:00:00.000Z"]);
    // The instant before local midnight is the previous day; local midnight is the new one.
    expect(win("day", "Europe/Berlin", "2026-03-29T21:59:59.999Z")[0]).toBe("2026-03-28T23:00:00.000Z");
    expect(win("day", "Europe/Berlin", "2026-03-29T22:00:00.000Z")[0]).toBe("2026-03-29T22:00:00.000Z");
  });

  it("a day whose midnight does not exist starts at the transition (America/Santiago, 2026-09-06)", () => {
    expect(win("day", "America/Santiago", "2026-09-06T12:00:00Z")).toEqual(["2026-09-06T04:00:00.000Z", "2026-09-07T03:00:00.000Z"]);
  });

  it("weeks start on Monday (ISO 8601), months on the 1st, quarters in January, April, July, October, years on 1 January", () => {
    // Sunday 2026-03-29 in Berlin is in the week of Monday 23 March.
    expect(win("week", "Europe/Berlin", "2026-03-29T21:00:00Z")).toEqual(["2026-03-22T23:00:00.000Z", "2026-03-29T22:00:00.000Z"]);
    expect(win("week", "Europe/Berlin", "2026-03-29T22:00:00Z")[0]).toBe("2026-03-29T22:00:00.000Z");
    expect(win("month", "America/New_York", "2026-03-01T04:59:59Z")).toEqual(["2026-02-01T05:00:00.000Z", "2026-03-01T05:00:00.000Z"]);
    expect(win("quarter", "UTC", "2026-05-15T00:00:00Z")).toEqual(["2026-04-01T00:00:00.000Z", "2026-07-01T00:00:00.000Z"]);
    expect(win("quarter", "UTC", "2026-12-31T23:59:59Z")).toEqual(["2026-10-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"]);
    expect(win("year", "Asia/Tokyo", "2026-12-31T15:00:00Z")).toEqual(["2026-12-31T15:00:00.000Z", "2027-12-31T15:00:00.000Z"]);
    expect(win("total", "UTC", "2026-12-31T15:00:00Z")).toEqual(["1970-01-01T00:00:00.000Z", undefined]);
  });
});

describe("period limits", () => {
  it("parses rolling durations of days, hours and minutes, and nothing else", () => {
    expect(parseRollingDuration("PT24H")).toBe(86_400_000);
    expect(parseRollingDuration("P1DT12H")).toBe(129_600_000);
    expect(parseRollingDuration("PT30M")).toBe(1_800_000);
    for (const bad of ["P", "PT", "P0D", "P1W", "P1Y", "24h", "P400D", "", 5]) expect(parseRollingDuration(bad), String(bad)).toBeUndefined();
  });

  it("refuses limits it cannot enforce, naming the problem", () => {
    const refusal = (f: () => unknown) => {
      try {
        f();
        return "";
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refusal(() => preparePeriods([{ period: "day", amount: 1 }], "Mars/Olympus", "EUR"))).toContain("not an IANA time zone");
    expect(refusal(() => preparePeriods([{ period: "day", rolling: "PT1H", amount: 1 }], undefined, "EUR"))).toContain("exactly one of period and rolling");
    expect(refusal(() => preparePeriods([{ period: "day" }], undefined, "EUR"))).toContain("an amount, a count or both");
    expect(refusal(() => preparePeriods([{ period: "day", amount: 1.001 }], undefined, "EUR"))).not.toBe("");
    expect(refusal(() => preparePeriods([{ period: "day", count: 0 }], undefined, "EUR"))).toContain("count must be a whole number");
    expect(
      refusal(() =>
        preparePeriods(
          [
            { period: "day", count: 1 },
            { period: "day", amount: 5 },
          ],
          undefined,
          "EUR",
        ),
      ),
    ).toContain("repeats the window");
    expect(preparePeriods([], undefined, "EUR")).toBeUndefined();
    expect(preparePeriods([{ period: "week", amount: 5 }], undefined, "EUR")?.timeZone).toBe("UTC");
  });

  it("a recurrence is one payment per frequency window and its occurrences in all, the lower count winning", () => {
    const p = mandatePeriods({
      currency: "USD",
      recurrence: { frequency: "month", occurrences: 12 },
      period_limits: [{ period: "month", amount: 20, count: 3 }],
    });
    expect(p?.limits.map((l) => [l.kind, l.count, l.amountMinor])).toEqual([
      ["month@UTC", 1, 2000n],
      ["total", 12, undefined],
    ]);
  });

  it("checks the count before the amount, inclusive at the limit", () => {
    const [l] = preparePeriods([{ period: "day", amount: 10, count: 2 }], "UTC", "EUR")!.limits;
    expect(checkPeriod(l!, { spentMinor: 500n, count: 1 }, 500n)).toBeUndefined();
    expect(checkPeriod(l!, { spentMinor: 500n, count: 1 }, 501n)).toBe("amount");
    expect(checkPeriod(l!, { spentMinor: 0n, count: 2 }, 1n)).toBe("count");
  });

  it("a rolling window holds the spends after t - D; its line resets when the oldest leaves it", () => {
    const p = preparePeriods([{ rolling: "PT24H", amount: 80 }], "UTC", "EUR")!;
    const w = windowAt(p.limits[0]!, p.timeZone, at("2026-06-02T10:00:00Z"));
    expect(w).toEqual({ kind: "rolling:86400000", since: at("2026-06-01T10:00:00Z"), rollingMs: 86_400_000 });
    const line = periodLine(p.limits[0]!, p.timeZone, at("2026-06-02T10:00:00Z"), { spentMinor: 3000n, count: 2, oldestMs: at("2026-06-01T18:00:00Z") }, (v) =>
      formatMinor(v, "EUR"),
    );
    expect(line).toEqual({ rolling: "PT24H", spent: "30.00", count: 2, limit: "80.00", remaining: "50.00", resets_at: "2026-06-02T18:00:00.000Z" });
  });

  it("a calendar line names its window and when it resets", () => {
    const p = preparePeriods([{ period: "day", amount: 50, count: 3 }], "Europe/Berlin", "EUR")!;
    expect(periodLine(p.limits[0]!, p.timeZone, at("2026-10-25T12:00:00Z"), { spentMinor: 6000n, count: 3 }, (v) => formatMinor(v, "EUR"))).toEqual({
      period: "day",
      time_zone: "Europe/Berlin",
      window_start: "2026-10-24T22:00:00.000Z",
      resets_at: "2026-10-25T23:00:00.000Z",
      spent: "60.00",
      count: 3,
      limit: "50.00",
      remaining: "0.00",
      count_limit: 3,
      count_remaining: 0,
    });
  });
});
