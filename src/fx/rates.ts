/**
 * Rate lookup: the store first, then the source, for "units of `reference` per one `currency`
 * on the UTC `day`". Used by `GET /v1/fx` and by the verify path (`rateFor`).
 *
 * Rules, in order:
 * 1. The same currency is rate "1" (no store, no source).
 * 2. A day after today (UTC, from the caller's clock) has no rate yet: none, no source call.
 * 3. A stored rate for the key is the answer; the source is not asked, so a source outage
 *    never breaks a day already fetched.
 * 4. Otherwise the source is asked (no source configured: FxSourceError NOT_CONFIGURED). Its
 *    rate is stored when it is final: published for the day itself, or the day is before
 *    today. A carried-forward answer for today (the day's publication may still come) is
 *    served but not stored, so the next lookup asks again.
 * 5. "No rate" answers are never stored: a currency the source learns later is found then
 *    (the source client remembers them in memory for SVC_FX_NO_RATE_TTL_MS, see frankfurter.ts).
 * Concurrent lookups of the same key (same store, same source) share one lookup.
 */
import { isCurrency, parseRate, type Rate } from "../core/money/index.js";
import { readStoredRate, storeRate, type Queryable } from "../store/index.js";
import { isUtcDay, utcDayOf } from "./day.js";
import { FxSourceError } from "./errors.js";
import { createFrankfurterSource, type FxSource } from "./frankfurter.js";
import type { FxSettings } from "./settings.js";
import type { OutboundPolicy } from "../http/index.js";

/** What a lookup needs besides the store: the source (null when not configured) and the time. */
export interface FxContext {
  source: FxSource | null;
  now: Date;
}

/** A lookup's outcome. */
export type RateLookup = { found: true; rate: string } | { found: false };

/**
 * Looks up a rate (see the module rules). `currency` and `reference` must be three upper-case
 * letters and `day` a valid `YYYY-MM-DD` (the caller checks). Throws FxSourceError when the
 * source is needed and gives no usable answer; store errors propagate.
 */
export async function lookupRate(db: Queryable, currency: string, reference: string, day: string, ctx: FxContext): Promise<RateLookup> {
  if (currency === reference) return { found: true, rate: "1" };
  const today = utcDayOf(ctx.now);
  if (day > today) return { found: false };
  const { source } = ctx;
  if (source === null) {
    const stored = await readStoredRate(db, currency, reference, day);
    if (stored !== undefined) return { found: true, rate: stored };
    throw new FxSourceError("NOT_CONFIGURED", "SVC_FX_SOURCE_URL is not set or not usable");
  }
  // Concurrent lookups of one key on one store and source share one store read, source request
  // and store write: a second caller never asks the source while the first is storing.
  let perSource = inFlight.get(db);
  if (!perSource) inFlight.set(db, (perSource = new WeakMap()));
  let pending = perSource.get(source);
  if (!pending) perSource.set(source, (pending = new Map()));
  const key = `${currency}/${reference}/${day}`;
  const shared = pending.get(key);
  if (shared) return shared;
  const map = pending;
  const p = storedOrFetched(db, source, currency, reference, day, today).finally(() => map.delete(key));
  map.set(key, p);
  return p;
}

const inFlight = new WeakMap<Queryable, WeakMap<FxSource, Map<string, Promise<RateLookup>>>>();

async function storedOrFetched(db: Queryable, source: FxSource, currency: string, reference: string, day: string, today: string): Promise<RateLookup> {
  const stored = await readStoredRate(db, currency, reference, day);
  if (stored !== undefined) return { found: true, rate: stored };
  const answer = await source.fetchRate(currency, reference, day);
  if (answer.kind === "none") return { found: false };
  if (answer.sourceDay === day || day < today) {
    return { found: true, rate: await storeRate(db, { currency, reference, day, rate: answer.rate, sourceDay: answer.sourceDay }) };
  }
  return { found: true, rate: answer.rate };
}

/**
 * The verify path's rate: units of `to` per one `from` on `day`, as an exact Rate, or
 * undefined when no rate is known: codes that are not ISO 4217 (the source is not asked) or an
 * unusable day, no rate for the day, or the source
 * gave no usable answer (the engine then fails closed with CURRENCY_MISMATCH). Store errors
 * propagate.
 */
export async function rateFor(db: Queryable, from: string, to: string, day: string, ctx: FxContext): Promise<Rate | undefined> {
  if (!isCurrency(from) || !isCurrency(to) || !isUtcDay(day)) return undefined;
  try {
    const r = await lookupRate(db, from, to, day, ctx);
    return r.found ? parseRate(r.rate) : undefined;
  } catch (e) {
    if (e instanceof FxSourceError) return undefined;
    throw e;
  }
}

const sources = new WeakMap<FxSettings, FxSource | null>();

/**
 * The one source of a settings object (null when SVC_FX_SOURCE_URL is unset or unusable),
 * reached under `policy` (the process's WRIT_OUTBOUND_* policy; the first call's is kept).
 */
export function fxSourceFor(settings: FxSettings, policy: OutboundPolicy): FxSource | null {
  let s = sources.get(settings);
  if (s === undefined) {
    s =
      settings.sourceUrl === null
        ? null
        : createFrankfurterSource({ url: settings.sourceUrl, timeoutMs: settings.timeoutMs, noRateTtlMs: settings.noRateTtlMs, policy });
    sources.set(settings, s);
  }
  return s;
}
