/**
 * Local wall-clock time in an IANA zone, fast enough for the evaluation hot path.
 *
 * Formatting with Intl on every call costs microseconds, so this module keeps one
 * `Intl.DateTimeFormat` per zone and caches the zone's UTC offset per 15-minute UTC bucket.
 * Modern offsets are whole quarter hours and transitions happen at quarter-hour local times
 * (02:00, 03:00, ...), so every transition falls on a quarter-hour UTC boundary and one offset
 * per bucket is exact. (Local mean time before the 1970s is not; `now` never is that old.)
 * The local minute of day and weekday are then integer arithmetic. Both caches are bounded.
 */

const BUCKET_MS = 15 * 60_000;
const DAY_MS = 86_400_000;
const MAX_ZONES = 1_000;
const MAX_BUCKETS_PER_ZONE = 2_048;
/** IANA names only: no offsets such as "+05:30", no empty strings, nothing huge. */
const ZONE_NAME_RE = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;

interface ZoneEntry {
  readonly fmt: Intl.DateTimeFormat;
  /** bucket number -> UTC offset in ms */
  readonly offsets: Map<number, number>;
}

const zones = new Map<string, ZoneEntry>();
// Names Intl refused, so that a bad zone costs a lookup, not a failed Intl construction, per call.
const unknownZones = new Set<string>();

function zoneEntry(zone: string): ZoneEntry | undefined {
  const hit = zones.get(zone);
  if (hit) return hit;
  if (typeof zone !== "string" || !ZONE_NAME_RE.test(zone) || unknownZones.has(zone)) return undefined;
  let fmt: Intl.DateTimeFormat;
  try {
    fmt = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      era: "short",
    });
  } catch {
    if (unknownZones.size >= MAX_ZONES) unknownZones.clear();
    unknownZones.add(zone);
    return undefined;
  }
  if (zones.size >= MAX_ZONES) zones.clear();
  const entry: ZoneEntry = { fmt, offsets: new Map() };
  zones.set(zone, entry);
  return entry;
}

/** True when `zone` names a time zone Intl knows (cached). */
export function isTimeZone(zone: unknown): zone is string {
  return typeof zone === "string" && zoneEntry(zone) !== undefined;
}

/** The zone's UTC offset at `ms`, computed with Intl (slow; used to fill the cache). */
function intlOffset(fmt: Intl.DateTimeFormat, ms: number): number {
  let y = 0,
    mo = 0,
    d = 0,
    h = 0,
    mi = 0,
    s = 0,
    bc = false;
  for (const p of fmt.formatToParts(ms)) {
    switch (p.type) {
      case "year":
        y = Number(p.value);
        break;
      case "month":
        mo = Number(p.value);
        break;
      case "day":
        d = Number(p.value);
        break;
      case "hour":
        h = Number(p.value);
        break;
      case "minute":
        mi = Number(p.value);
        break;
      case "second":
        s = Number(p.value);
        break;
      case "era":
        bc = p.value.startsWith("B");
        break;
      default:
        break;
    }
  }
  const date = new Date(0);
  date.setUTCFullYear(bc ? 1 - y : y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime() - (ms - (((ms % 1000) + 1000) % 1000));
}

/** UTC offset (ms) of `zone` at epoch ms `ms`, or undefined for an unknown zone or instant. */
export function zoneOffsetMs(zone: string, ms: number): number | undefined {
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return undefined;
  const entry = zoneEntry(zone);
  if (!entry) return undefined;
  const bucket = Math.floor(ms / BUCKET_MS);
  let off = entry.offsets.get(bucket);
  if (off === undefined) {
    off = intlOffset(entry.fmt, bucket * BUCKET_MS);
    if (entry.offsets.size >= MAX_BUCKETS_PER_ZONE) {
      const oldest = entry.offsets.keys().next();
      if (!oldest.done) entry.offsets.delete(oldest.value);
    }
    entry.offsets.set(bucket, off);
  }
  return off;
}

/** Local wall-clock facts of one instant in one zone. */
export interface LocalTime {
  /** Minutes since local midnight, 0..1439. */
  minuteOfDay: number;
  /** 0 = Sunday .. 6 = Saturday. */
  weekday: number;
}

/**
 * Local minute of day and weekday of `ms` in `zone`, or undefined when the zone is unknown
 * or the instant is not a finite date.
 */
export function localTime(zone: string, ms: number): LocalTime | undefined {
  const off = zoneOffsetMs(zone, ms);
  if (off === undefined) return undefined;
  const local = ms + off;
  const dayNumber = Math.floor(local / DAY_MS);
  const msOfDay = local - dayNumber * DAY_MS;
  // 1970-01-01 was a Thursday (4).
  return { minuteOfDay: Math.floor(msOfDay / 60_000), weekday: (((dayNumber + 4) % 7) + 7) % 7 };
}

/** "HH:MM" of a minute of day. */
export function formatMinuteOfDay(minute: number): string {
  const h = Math.floor(minute / 60);
  const m = minute % 60;
  return `${h < 10 ? "0" : ""}${h}:${m < 10 ? "0" : ""}${m}`;
}

/** Minutes since midnight of a strict "HH:MM" (00:00-23:59), or undefined. */
export function parseMinuteOfDay(text: unknown): number | undefined {
  if (typeof text !== "string" || text.length !== 5 || text.charCodeAt(2) !== 58) return undefined;
  const d0 = text.charCodeAt(0) - 48,
    d1 = text.charCodeAt(1) - 48,
    d3 = text.charCodeAt(3) - 48,
    d4 = text.charCodeAt(4) - 48;
  if (d0 < 0 || d0 > 9 || d1 < 0 || d1 > 9 || d3 < 0 || d3 > 5 || d4 < 0 || d4 > 9) return undefined;
  const h = d0 * 10 + d1;
  if (h > 23) return undefined;
  return h * 60 + d3 * 10 + d4;
}

export const WEEKDAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;
