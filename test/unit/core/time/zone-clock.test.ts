import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { formatMinuteOfDay, isTimeZone, localTime, parseMinuteOfDay, zoneOffsetMs } from "../../../../src/core/time/zone-clock.js";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

const refFormats = new Map<string, Intl.DateTimeFormat>();

/** The reference: Intl formatting on every call. */
function intlLocal(zone: string, ms: number): { minuteOfDay: number; weekday: number } {
  let fmt = refFormats.get(zone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", hour: "numeric", minute: "numeric", weekday: "short" });
    refFormats.set(zone, fmt);
  }
  const parts = fmt.formatToParts(ms);
  const get = (t: string): string => parts.find((p) => p.type === t)?.value ?? "";
  return { minuteOfDay: Number(get("hour")) * 60 + Number(get("minute")), weekday: WEEKDAYS.indexOf(get("weekday")) };
}

function sweep(zone: string, fromIso: string, hours: number, stepMs = 60_000): void {
  const from = Date.parse(fromIso);
  for (let t = from; t < from + hours * 3600_000; t += stepMs) {
    expect(localTime(zone, t), `${zone} at ${new Date(t).toISOString()}`).toEqual(intlLocal(zone, t));
  }
}

describe("localTime", () => {
  it("matches Intl minute by minute across Europe/Berlin DST changes", () => {
    sweep("Europe/Berlin", "2026-03-28T12:00:00Z", 36); // spring forward 2026-03-29 01:00Z
    sweep("Europe/Berlin", "2026-10-24T12:00:00Z", 36); // fall back 2026-10-25 01:00Z
  });

  it("matches Intl across America/New_York DST changes", () => {
    sweep("America/New_York", "2026-03-07T18:00:00Z", 36); // 2026-03-08 07:00Z
    sweep("America/New_York", "2026-10-31T18:00:00Z", 36); // 2026-11-01 06:00Z
  });

  it("matches Intl in half-hour, 45-minute and half-hour-DST zones", () => {
    sweep("Asia/Kolkata", "2026-06-30T12:00:00Z", 26);
    sweep("Asia/Kathmandu", "2026-12-31T12:00:00Z", 26);
    sweep("Australia/Lord_Howe", "2026-04-04T12:00:00Z", 26); // +11 -> +10:30
    sweep("Australia/Lord_Howe", "2026-10-03T12:00:00Z", 26);
  });

  it("matches Intl at random instants and zones", () => {
    const zones = [
      "UTC",
      "Europe/Berlin",
      "America/New_York",
      "Asia/Kolkata",
      "Asia/Kathmandu",
      "Pacific/Chatham",
      "America/St_Johns",
      "Pacific/Kiritimati",
      "Pacific/Pago_Pago",
    ];
    fc.assert(
      fc.property(fc.constantFrom(...zones), fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2090, 0, 1) }), (zone, ms) => {
        expect(localTime(zone, ms)).toEqual(intlLocal(zone, ms));
      }),
      { numRuns: 200 },
    );
  });

  it("computes offsets: Kolkata +05:30, Kathmandu +05:45, Berlin +01:00 in winter", () => {
    const t = Date.UTC(2026, 0, 15, 12);
    expect(zoneOffsetMs("Asia/Kolkata", t)).toBe(330 * 60_000);
    expect(zoneOffsetMs("Asia/Kathmandu", t)).toBe(345 * 60_000);
    expect(zoneOffsetMs("Europe/Berlin", t)).toBe(60 * 60_000);
    expect(zoneOffsetMs("America/New_York", t)).toBe(-300 * 60_000);
  });

  it("uses the cached offset: no Intl call for a second instant in the same 15 minutes", () => {
    const t = Date.UTC(2031, 4, 6, 10, 0);
    localTime("Europe/Paris", t);
    const spy = vi.spyOn(Intl.DateTimeFormat.prototype, "formatToParts");
    try {
      for (let i = 0; i < 100; i++) localTime("Europe/Paris", t + i * 1000);
      expect(spy).not.toHaveBeenCalled();
      localTime("Europe/Paris", t + 15 * 60_000);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it("remembers unknown zones: no second Intl construction", () => {
    expect(localTime("Atlantis/Capital", 0)).toBeUndefined();
    const spy = vi.spyOn(Intl, "DateTimeFormat");
    try {
      expect(localTime("Atlantis/Capital", 0)).toBeUndefined();
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  it("is undefined for unknown zones and non-finite instants", () => {
    expect(localTime("Mars/Olympus_Mons", 0)).toBeUndefined();
    expect(localTime("+05:30", 0)).toBeUndefined();
    expect(localTime("UTC", Number.NaN)).toBeUndefined();
    expect(localTime("UTC", Number.POSITIVE_INFINITY)).toBeUndefined();
  });
});

describe("isTimeZone", () => {
  it("accepts IANA names and refuses anything else", () => {
    expect(isTimeZone("Europe/Berlin")).toBe(true);
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("America/Argentina/Buenos_Aires")).toBe(true);
    for (const bad of ["Europe/Atlantis", "", "+01:00", "-05:00", "Europe/Berlin\n", 5, null, "x".repeat(100)]) {
      expect(isTimeZone(bad), String(bad)).toBe(false);
    }
  });
});

describe("minutes of day", () => {
  it("parses strict HH:MM and formats back", () => {
    expect(parseMinuteOfDay("00:00")).toBe(0);
    expect(parseMinuteOfDay("23:59")).toBe(1439);
    expect(parseMinuteOfDay("09:05")).toBe(545);
    for (const bad of ["24:00", "23:60", "9:05", "09:5", "0905", "09-05", " 9:05", "ab:cd", 905, undefined]) {
      expect(parseMinuteOfDay(bad), String(bad)).toBeUndefined();
    }
    expect(formatMinuteOfDay(545)).toBe("09:05");
    expect(formatMinuteOfDay(1439)).toBe("23:59");
  });
});
