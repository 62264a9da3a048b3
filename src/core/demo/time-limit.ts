/**
 * The demo intent's expiry from its `time_limit`: a plain date `YYYY-MM-DD` means the end of
 * that UTC day (`YYYY-MM-DDT23:59:59Z`, the intent lapses at that second); an RFC 3339
 * date-time is used as given; no time limit means the end of the UTC day after `now` (so the
 * same request gives the same mandate, and mandate hash, all day long).
 */
import { formatInstant } from "../time/index.js";

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for `YYYY-MM-DD` naming a real calendar day (no 2025-02-30). */
export function isCalendarDay(text: string): boolean {
  const m = DAY_RE.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  return d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/** The last second of a UTC day, as an RFC 3339 string. */
function endOfDay(day: string): string {
  return `${day}T23:59:59Z`;
}

/** The mandate's `expires_at` for a `time_limit` (already checked) at `nowMs`. */
export function expiryFor(timeLimit: string | undefined, nowMs: number): string {
  if (timeLimit === undefined) return endOfDay(formatInstant(nowMs + 24 * 3600_000).slice(0, 10));
  return isCalendarDay(timeLimit) ? endOfDay(timeLimit) : timeLimit;
}
