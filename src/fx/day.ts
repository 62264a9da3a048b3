/**
 * UTC calendar days as `YYYY-MM-DD` text: the `day` of a rate. A day is valid only when it
 * names a real calendar date (2025-02-30 is not one). Comparison of valid days is plain string
 * comparison.
 */

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Epoch ms of 00:00 UTC of a valid `YYYY-MM-DD` day, else undefined. */
function dayStartMs(text: string): number | undefined {
  const m = DAY_RE.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return undefined;
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  const at = new Date(0);
  at.setUTCFullYear(y, mo - 1, d);
  return at.getUTCDate() === d ? at.getTime() : undefined; // 2025-02-30 rolls over to March
}

/** True when `text` has the form `YYYY-MM-DD` (whether or not the date exists). */
export function hasDayForm(text: string): boolean {
  return DAY_RE.test(text);
}

/** True for `YYYY-MM-DD` naming a real calendar date (year 0001 or later). */
export function isUtcDay(text: unknown): text is string {
  return typeof text === "string" && dayStartMs(text) !== undefined;
}

/** The UTC day of an instant. */
export function utcDayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** `day` moved by `n` days (negative moves back). `day` must be valid. */
export function addDays(day: string, n: number): string {
  const ms = dayStartMs(day);
  if (ms === undefined) throw new RangeError(`not a calendar day: ${day}`);
  return new Date(ms + n * 86_400_000).toISOString().slice(0, 10);
}
