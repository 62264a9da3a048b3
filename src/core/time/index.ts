/**
 * RFC 3339 instants as epoch milliseconds, parsed strictly. A time must be a full
 * `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` whose calendar fields are real; anything else is
 * `undefined`, never an exception, so callers can fail closed. (`Date.parse` alone rolls
 * Feb 30 over to March and accepts 24:00; this does not.)
 */

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Epoch milliseconds of an RFC 3339 date-time, or undefined when it is not one. */
export function parseInstant(text: unknown): number | undefined {
  if (typeof text !== "string" || text.length > 40) return undefined;
  const m = RFC3339_RE.exec(text);
  if (!m) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return undefined;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return undefined;
  const ms = Date.parse(text.toUpperCase());
  return Number.isFinite(ms) ? ms : undefined;
}

/** An epoch-millisecond instant as an RFC 3339 UTC string (`2026-01-02T03:04:05.000Z`). */
export function formatInstant(ms: number): string {
  return new Date(ms).toISOString();
}
export { type Clock, type ClockTimer, systemClock } from "./clock.js";
export { WEEKDAY_NAMES, formatMinuteOfDay, isTimeZone, localTime, parseMinuteOfDay, zoneOffsetMs, type LocalTime } from "./zone-clock.js";
