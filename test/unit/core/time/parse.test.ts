import { describe, expect, it } from "vitest";
import { parseInstant } from "../../../../src/core/time/index.js";

describe("parseInstant", () => {
  it("parses RFC 3339 date-times with Z, offsets and fractions", () => {
    expect(parseInstant("2025-01-02T03:04:05Z")).toBe(Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(parseInstant("2025-01-02T03:04:05.250Z")).toBe(Date.UTC(2025, 0, 2, 3, 4, 5, 250));
    expect(parseInstant("2025-01-02T05:04:05+02:00")).toBe(Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(parseInstant("2025-01-02t03:04:05z")).toBe(Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(parseInstant("2024-02-29T00:00:00Z")).toBe(Date.UTC(2024, 1, 29));
  });

  it("refuses anything else, including dates Date.parse would roll over", () => {
    for (const bad of [
      "2025-02-29T00:00:00Z",
      "2025-04-31T00:00:00Z",
      "2025-13-01T00:00:00Z",
      "2025-01-01T24:00:00Z",
      "2025-01-01T00:60:00Z",
      "2025-01-01T00:00:60Z",
      "2025-01-01T00:00:00+24:00",
      "2025-01-01",
      "2025-01-01T00:00:00",
      "2025-01-01 00:00:00Z",
      "Jan 1 2025",
      "",
      42,
      undefined,
    ]) {
      expect(parseInstant(bad)).toBeUndefined();
    }
  });
});
