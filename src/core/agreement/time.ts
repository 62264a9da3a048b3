/**
 * Strict RFC 3339 date-time parsing for the agreement record. `Date.parse` alone is lenient (it
 * accepts "2024-02-30" as March 1st and many other shapes); here a time must be a full
 * `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` whose calendar fields survive a round trip.
 */

const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Epoch milliseconds of an RFC 3339 date-time, or undefined when `text` is not one. */
export function parseDateTime(text: unknown): number | undefined {
  if (typeof text !== "string") return undefined;
  const m = DATE_TIME_RE.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return undefined;
  const ms = Date.parse(text.toUpperCase());
  return Number.isFinite(ms) ? ms : undefined;
}
