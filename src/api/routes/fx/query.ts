/**
 * The query of `GET /v1/fx`, checked by hand so the answers are the spec's 400s with a clear
 * sentence (the route schema only documents it; Fastify's coercion would otherwise turn a
 * repeated parameter into an array or accept what the spec refuses).
 *
 * Rules: `currency` is required; `currency`, `reference` and `reference_currency` are exactly
 * three upper-case letters (`eur` is refused, not upper-cased) naming an ISO 4217 currency
 * (`QQQ` is refused here, so the source is never asked about it); `reference` defaults to USD,
 * `reference_currency` is its alias, both given and different is a 400; `day` is `YYYY-MM-DD`
 * naming a real calendar date (2025-02-30 is a 400), default the current UTC day of `now`.
 * A parameter given twice is a 400.
 */
import { isIsoCurrency } from "../../../core/money/index.js";
import { hasDayForm, isUtcDay, utcDayOf } from "../../../fx/index.js";
import { ApiError } from "../../errors.js";

/** A checked fx query. */
export interface FxQuery {
  currency: string;
  reference: string;
  day: string;
}

const CURRENCY_RE = /^[A-Z]{3}$/;

function invalid(message: string): ApiError {
  return new ApiError("FX_QUERY_INVALID", message);
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw invalid(`${name} must be given once`);
  return v;
}

function code(query: Record<string, unknown>, name: string): string | undefined {
  const v = single(query, name);
  if (v !== undefined && !CURRENCY_RE.test(v)) throw invalid(`${name} must be three upper-case letters (an ISO 4217 code such as EUR)`);
  if (v !== undefined && !isIsoCurrency(v)) throw invalid(`${name} ${v} is not an ISO 4217 currency code`);
  return v;
}

/** Checks the query (see the module rules); throws the 400 ApiError. */
export function parseFxQuery(query: unknown, now: Date): FxQuery {
  const q = (typeof query === "object" && query !== null ? query : {}) as Record<string, unknown>;
  const currency = code(q, "currency");
  if (currency === undefined) throw invalid("currency is required");
  const reference = code(q, "reference");
  const alias = code(q, "reference_currency");
  if (reference !== undefined && alias !== undefined && reference !== alias) {
    throw invalid("reference and reference_currency differ");
  }
  const dayText = single(q, "day");
  if (dayText !== undefined && !hasDayForm(dayText)) throw invalid("day must be a UTC date YYYY-MM-DD");
  if (dayText !== undefined && !isUtcDay(dayText)) throw invalid(`day ${dayText} is not a calendar date`);
  return { currency, reference: reference ?? alias ?? "USD", day: dayText ?? utcDayOf(now) };
}
