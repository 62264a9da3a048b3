/**
 * Limits per period: how much, and how many payments, a mandate or a delegation allows per
 * calendar day, week, month or year in the principal's time zone, per rolling window (the last
 * 24 hours, the last 7 days), per calendar quarter (from 1 January, April, July, October), or in all (`total`, counts only make sense there: a number of
 * occurrences). The windows are computed here from the SERVICE clock's instant (the decision
 * time), never from anything an agent sends; the spend transaction (src/store/ledger/spend.ts)
 * and the read API's budget view (../agreement/budget.ts) both use these functions, so what
 * the read API shows is what the spend transaction checks.
 *
 * - Calendar windows are local to `time_zone` (an IANA name, default "UTC"): a day runs from
 *   the first instant of the local date to the first instant of the next one (23 or 25 hours
 *   across a DST change; a day whose midnight does not exist starts at the transition); a week
 *   starts on Monday (ISO 8601); a month on its 1st, a year on 1 January. Computed with Intl
 *   (the zone data of Node's ICU), no hand-kept offsets.
 * - A rolling window of duration D at instant t holds the spends at instants in (t - D, t].
 * - Amounts are integer minor units (bigint) of the owner's currency; a limit holds `amount`
 *   on top of `spent` when `spent + amount <= limit` (the budget rule, ./budget.ts), a count
 *   limit N holds one more payment when `count + 1 <= N`.
 * Pure.
 */
import { checkBudget, remainingOf } from "./budget.js";
import { MoneyError, toMinor } from "./index.js";
import { isTimeZone, zoneOffsetMs } from "../time/index.js";

/** The calendar periods. `total`: one window for all time (a number of occurrences). */
export const CALENDAR_PERIODS = ["day", "week", "month", "quarter", "year", "total"] as const;
export type CalendarPeriod = (typeof CALENDAR_PERIODS)[number];

/** One period limit as a record declares it (amounts in major units). */
export interface PeriodLimit {
  /** A calendar period in the owner's `time_zone`. Exactly one of `period` and `rolling`. */
  period?: CalendarPeriod;
  /** A rolling window as an ISO 8601 duration of days, hours or minutes: P7D, PT24H, PT30M. */
  rolling?: string;
  /** At most this much in the window, in major units of the owner's currency. */
  amount?: number;
  /** At most this many payments in the window. */
  count?: number;
}

/** A period limit parsed: the window and the limits in minor units. */
export interface PreparedPeriodLimit {
  limit: PeriodLimit;
  /** The window kind, the key of the counters: "day@Europe/Berlin", "total", "rolling:86400000". */
  kind: string;
  /** Rolling windows: the duration in ms. */
  rollingMs?: number;
  amountMinor?: bigint;
  count?: number;
}

/** The period limits of one owner (a mandate or a delegation scope), parsed. */
export interface PreparedPeriods {
  timeZone: string;
  limits: PreparedPeriodLimit[];
}

export { isTimeZone };

interface Wall {
  y: number;
  m: number;
  d: number;
}

/** The zone's offset at instant `ms` (local wall time minus UTC), in ms (../time/zone-clock.ts; the zone was checked when the limits were prepared). */
function offsetAt(ms: number, tz: string): number {
  const off = zoneOffsetMs(tz, ms);
  if (off === undefined) throw new MoneyError(`time_zone ${tz} is not an IANA time zone`);
  return off;
}

/** The local date of instant `ms` in `tz`. */
function wallAt(ms: number, tz: string): Wall {
  const local = new Date(ms + offsetAt(ms, tz));
  return { y: local.getUTCFullYear(), m: local.getUTCMonth() + 1, d: local.getUTCDate() };
}

const DAY_MS = 86_400_000;
const dateNum = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d);

/** The first instant whose local date in `tz` is y-m-d (m 1-12; out-of-range days roll over, as Date.UTC does). */
export function startOfLocalDate(y: number, m: number, d: number, tz: string): number {
  const wall = dateNum(y, m, d);
  const target = wall;
  let best: number | undefined;
  for (const probe of [wall - DAY_MS, wall, wall + DAY_MS]) {
    const t = wall - offsetAt(probe, tz);
    const w = wallAt(t, tz);
    if (dateNum(w.y, w.m, w.d) === target && (best === undefined || t < best)) best = t;
  }
  // No candidate lands on the date only if the zone skipped it entirely (Pacific/Apia,
  // 2011-12-30): the window then starts where the next date starts.
  return best ?? startOfLocalDate(y, m, d + 1, tz);
}

/**
 * The last window computed per period and zone: a window is fixed once computed, so an instant
 * inside it has the same answer (the hot path computes each window once per window, not per
 * payment; Intl's zone arithmetic costs a few microseconds a call).
 */
const lastWindow = new Map<string, { start: number; end: number }>();

/** The window of `period` in `tz` holding instant `ms`: [start, end) (end undefined for `total`). */
export function calendarWindow(period: CalendarPeriod, tz: string, ms: number): { start: number; end?: number } {
  if (period === "total") return { start: 0 };
  const key = `${period}@${tz}`;
  const last = lastWindow.get(key);
  if (last && last.start <= ms && ms < last.end) return { start: last.start, end: last.end };
  const w = computeWindow(period, tz, ms);
  if (lastWindow.size > 1000) lastWindow.clear();
  lastWindow.set(key, w);
  return { start: w.start, end: w.end };
}

function computeWindow(period: Exclude<CalendarPeriod, "total">, tz: string, ms: number): { start: number; end: number } {
  const w = wallAt(ms, tz);
  if (period === "day") return { start: startOfLocalDate(w.y, w.m, w.d, tz), end: startOfLocalDate(w.y, w.m, w.d + 1, tz) };
  if (period === "week") {
    const isoDay = ((new Date(dateNum(w.y, w.m, w.d)).getUTCDay() + 6) % 7) + 1; // Monday 1 .. Sunday 7
    const first = w.d - (isoDay - 1);
    return { start: startOfLocalDate(w.y, w.m, first, tz), end: startOfLocalDate(w.y, w.m, first + 7, tz) };
  }
  if (period === "month") return { start: startOfLocalDate(w.y, w.m, 1, tz), end: startOfLocalDate(w.y, w.m + 1, 1, tz) };
  if (period === "quarter") {
    const first = Math.floor((w.m - 1) / 3) * 3 + 1; // January, April, July, October
    return { start: startOfLocalDate(w.y, first, 1, tz), end: startOfLocalDate(w.y, first + 3, 1, tz) };
  }
  return { start: startOfLocalDate(w.y, 1, 1, tz), end: startOfLocalDate(w.y + 1, 1, 1, tz) };
}

const DURATION = /^P(?:(\d{1,4})D)?(?:T(?:(\d{1,5})H)?(?:(\d{1,6})M)?)?$/;

/** An ISO 8601 duration of days, hours and minutes (P7D, PT24H, P1DT12H, PT30M) in ms; undefined when not one or zero. */
export function parseRollingDuration(text: unknown): number | undefined {
  if (typeof text !== "string") return undefined;
  const m = DURATION.exec(text);
  if (!m || text === "P" || text.endsWith("T")) return undefined;
  const ms = Number(m[1] ?? 0) * DAY_MS + Number(m[2] ?? 0) * 3_600_000 + Number(m[3] ?? 0) * 60_000;
  return ms > 0 && ms <= 366 * DAY_MS ? ms : undefined;
}

/**
 * Parses an owner's period limits (`time_zone` default "UTC"). Throws MoneyError naming the
 * first problem: an unknown time zone, not exactly one of period/rolling, neither amount nor
 * count, an amount that is not one in `currency`, a count that is not a whole number >= 1.
 */
export function preparePeriods(limits: readonly PeriodLimit[] | undefined, timeZone: string | undefined, currency: string): PreparedPeriods | undefined {
  if (limits === undefined || limits.length === 0) return undefined;
  const tz = timeZone ?? "UTC";
  if (!isTimeZone(tz)) throw new MoneyError(`time_zone ${String(tz)} is not an IANA time zone`);
  const out: PreparedPeriodLimit[] = [];
  const seen = new Set<string>();
  for (const [i, l] of limits.entries()) {
    const where = `period_limits[${i}]`;
    if ((l.period === undefined) === (l.rolling === undefined)) throw new MoneyError(`${where} needs exactly one of period and rolling`);
    if (l.amount === undefined && l.count === undefined) throw new MoneyError(`${where} needs an amount, a count or both`);
    const p: PreparedPeriodLimit = { limit: l, kind: "" };
    if (l.period !== undefined) {
      if (!(CALENDAR_PERIODS as readonly string[]).includes(l.period)) throw new MoneyError(`${where}.period must be one of ${CALENDAR_PERIODS.join(", ")}`);
      p.kind = l.period === "total" ? "total" : `${l.period}@${tz}`;
    } else {
      const ms = parseRollingDuration(l.rolling);
      if (ms === undefined) throw new MoneyError(`${where}.rolling must be an ISO 8601 duration of days, hours or minutes up to 366 days (P7D, PT24H)`);
      p.rollingMs = ms;
      p.kind = `rolling:${ms}`;
    }
    if (seen.has(p.kind)) throw new MoneyError(`${where} repeats the window ${l.period ?? l.rolling ?? ""}`);
    seen.add(p.kind);
    if (l.amount !== undefined) p.amountMinor = toMinor(l.amount, currency);
    if (l.count !== undefined) {
      if (!Number.isSafeInteger(l.count) || l.count < 1) throw new MoneyError(`${where}.count must be a whole number at or above 1`);
      p.count = l.count;
    }
    out.push(p);
  }
  return { timeZone: tz, limits: out };
}

/** Where a limit's usage is kept at instant `ms`: calendar windows by start, rolling ones by the instant after which spends count. */
export type WindowAt = { kind: string; start: number; end?: number } | { kind: string; since: number; rollingMs: number };

/** The window of `l` at instant `ms` (the decision time). */
export function windowAt(l: PreparedPeriodLimit, timeZone: string, ms: number): WindowAt {
  if (l.rollingMs !== undefined) return { kind: l.kind, since: ms - l.rollingMs, rollingMs: l.rollingMs };
  return { kind: l.kind, ...calendarWindow(l.limit.period as CalendarPeriod, timeZone, ms) };
}

/** A window's usage: spend (minor units) and number of payments; `oldestMs`: a rolling window's oldest counted spend. */
export interface WindowUsage {
  spentMinor: bigint;
  count: number;
  oldestMs?: number;
}

/** Which of a limit's bounds `amountMinor` (one more payment) on top of `usage` breaks: "amount", "count" or undefined (within). */
export function checkPeriod(l: PreparedPeriodLimit, usage: WindowUsage, amountMinor: bigint): "amount" | "count" | undefined {
  if (l.count !== undefined && usage.count + 1 > l.count) return "count";
  if (l.amountMinor !== undefined && checkBudget(l.amountMinor, usage.spentMinor, amountMinor) === "exceeded") return "amount";
  return undefined;
}

/** How a limit's window reads in messages: "calendar day in Europe/Berlin", "rolling PT24H", "total". */
export function periodName(l: PreparedPeriodLimit, timeZone: string): string {
  if (l.limit.rolling !== undefined) return `rolling window ${l.limit.rolling}`;
  if (l.limit.period === "total") return "total";
  return `calendar ${String(l.limit.period)} in ${timeZone}`;
}

/** One period line of the budget view (../agreement/budget.ts). */
export interface PeriodLine {
  period?: CalendarPeriod;
  rolling?: string;
  time_zone?: string;
  /** The window in force: its start (calendar windows) and when it resets (absent: never, or a rolling window without spend). */
  window_start?: string;
  resets_at?: string;
  limit?: string;
  spent: string;
  remaining?: string;
  count_limit?: number;
  count: number;
  count_remaining?: number;
}

/** The line of limit `l` with `usage` at instant `ms`; `fmt` formats minor units. */
export function periodLine(l: PreparedPeriodLimit, timeZone: string, ms: number, usage: WindowUsage, fmt: (minor: bigint) => string): PeriodLine {
  // Members in the order the API's schema lists them.
  const out: Partial<PeriodLine> = {};
  const w = windowAt(l, timeZone, ms);
  if (l.limit.rolling !== undefined) {
    out.rolling = l.limit.rolling;
    if (usage.oldestMs !== undefined && "rollingMs" in w) out.resets_at = new Date(usage.oldestMs + w.rollingMs).toISOString();
  } else {
    out.period = l.limit.period as CalendarPeriod;
    if (l.limit.period !== "total") out.time_zone = timeZone;
    if ("start" in w && l.limit.period !== "total") out.window_start = new Date(w.start).toISOString();
    if ("end" in w && w.end !== undefined) out.resets_at = new Date(w.end).toISOString();
  }
  if (l.amountMinor !== undefined) out.limit = fmt(l.amountMinor);
  out.spent = fmt(usage.spentMinor);
  if (l.amountMinor !== undefined) out.remaining = fmt(remainingOf(l.amountMinor, usage.spentMinor));
  if (l.count !== undefined) out.count_limit = l.count;
  out.count = usage.count;
  if (l.count !== undefined) out.count_remaining = Math.max(0, l.count - usage.count);
  return out as PeriodLine;
}

/** A recurring mandate's recurrence (its schema: src/core/schemas/common.ts, `recurrence`). */
export interface Recurrence {
  frequency: "day" | "week" | "month" | "quarter" | "year";
  occurrences?: number;
}

/**
 * The period limits of a mandate: its `period_limits` plus those its `recurrence` stands for
 * (at most one payment per `frequency` window, at most `occurrences` in all: a count limit of
 * `total`), the lower count when both name a window. Throws MoneyError as `preparePeriods`.
 */
export function mandatePeriods(m: {
  currency: string;
  time_zone?: string;
  period_limits?: PeriodLimit[];
  recurrence?: Recurrence;
}): PreparedPeriods | undefined {
  const limits: PeriodLimit[] = (m.period_limits ?? []).map((l) => ({ ...l }));
  const r = m.recurrence;
  if (r !== undefined) {
    if (!["day", "week", "month", "quarter", "year"].includes(r.frequency))
      throw new MoneyError("recurrence.frequency must be day, week, month, quarter or year");
    if (r.occurrences !== undefined && (!Number.isSafeInteger(r.occurrences) || r.occurrences < 1))
      throw new MoneyError("recurrence.occurrences must be a whole number at or above 1");
    const add = (period: CalendarPeriod, count: number) => {
      const same = limits.find((l) => l.period === period);
      if (same) same.count = Math.min(same.count ?? count, count);
      else limits.push({ period, count });
    };
    add(r.frequency, 1);
    if (r.occurrences !== undefined) add("total", r.occurrences);
  }
  return preparePeriods(limits, m.time_zone, m.currency);
}
