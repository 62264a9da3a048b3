import { describe, expect, it } from "vitest";
import { addDays, hasDayForm, isUtcDay, utcDayOf } from "../../../src/fx/day.js";

describe("UTC days", () => {
  it("accepts only real calendar dates of the form YYYY-MM-DD", () => {
    for (const ok of ["2024-02-29", "2025-12-31", "0001-01-01", "0050-03-01"]) expect(isUtcDay(ok), ok).toBe(true);
    for (const bad of ["2025-02-29", "2025-02-30", "2025-13-01", "2025-00-10", "2025-01-00", "0000-01-01", "2025-1-5", "20250105", 20250105]) {
      expect(isUtcDay(bad), String(bad)).toBe(false);
    }
    expect(hasDayForm("2025-02-30")).toBe(true);
    expect(hasDayForm("2025-2-3")).toBe(false);
  });

  it("moves days across months, years and leap days, also in years below 100", () => {
    expect(addDays("2025-01-06", -14)).toBe("2024-12-23");
    expect(addDays("2024-02-28", 1)).toBe("2024-02-29");
    expect(addDays("2024-12-31", 1)).toBe("2025-01-01");
    expect(addDays("0050-03-01", -14)).toBe("0050-02-15");
    expect(() => addDays("2025-02-30", 1)).toThrow(RangeError);
  });

  it("takes the UTC day of an instant", () => {
    expect(utcDayOf(new Date("2025-01-08T23:59:59-05:00"))).toBe("2025-01-09");
  });
});
