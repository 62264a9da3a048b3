import { describe, expect, it } from "vitest";
import { formatInstant, parseInstant } from "../../../../src/core/time/index.js";

describe("parseInstant", () => {
  it("parses RFC 3339 date-times with Z or an offset", () => {
    expect(parseInstant("2026-03-01T12:00:00Z")).toBe(Date.UTC(2026, 2, 1, 12));
    expect(parseInstant("2026-03-01T12:00:00.250Z")).toBe(Date.UTC(2026, 2, 1, 12, 0, 0, 250));
    expect(parseInstant("2026-03-01T13:30:00+01:30")).toBe(Date.UTC(2026, 2, 1, 12));
    expect(parseInstant("2026-03-01t12:00:00z")).toBe(Date.UTC(2026, 2, 1, 12));
  });

  it("refuses what Date.parse would roll over or guess", () => {
    for (const bad of [
      "2025-02-30T00:00:00Z",
      "2025-02-28T24:00:00Z",
      "2025-02-28T23:60:00Z",
      "2025-02-28T23:59:60Z",
      "2025-13-01T00:00:00Z",
      "2025-02-28T23:00:00",
      "2025-02-28",
      "2025-02-28T23:00:00+24:00",
      "tomorrow",
      "",
      42,
      null,
      undefined,
    ]) {
      expect(parseInstant(bad), String(bad)).toBeUndefined();
    }
    expect(parseInstant("2024-02-29T00:00:00Z")).toBe(Date.UTC(2024, 1, 29));
  });

  it("formats back to UTC", () => {
    expect(formatInstant(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02T03:04:05.000Z");
  });
});
