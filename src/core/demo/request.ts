/**
 * The request of `POST /demo/check`, checked field by field. Treats the body as hostile:
 * `parseDemoCheckRequest` either returns typed values or throws `DemoInputError` with one
 * short sentence naming the field (the route answers it as a 400).
 *
 * Rules: amounts are JSON numbers (never strings), not negative, with no more decimals than
 * their currency allows; currencies are three upper-case letters Intl knows; `include_expiry`
 * is a boolean (default true); `time_limit` is a date `YYYY-MM-DD` or an RFC 3339 date-time
 * (an empty string counts as absent); free-text fields are strings of bounded length (an empty
 * `category` counts as absent). Unknown members are ignored.
 */
import { currencyRefusal, MoneyError, toMinor } from "../money/index.js";
import { parseInstant } from "../time/index.js";
import { DemoInputError } from "./errors.js";
import { isCalendarDay } from "./time-limit.js";

/** The intent a demo principal would sign. Amounts in major units. */
export interface DemoIntent {
  maximum_amount: number;
  currency: string;
  purpose?: string;
  category?: string;
  natural_language?: string;
  include_expiry: boolean;
  time_limit?: string;
}

/** The payment evaluated against the demo intent. Amount in major units. */
export interface DemoPayment {
  amount: number;
  currency: string;
  merchant?: string;
  item?: string;
}

/** A checked demo request. */
export interface DemoCheckRequest {
  intent: DemoIntent;
  payment: DemoPayment;
}

/** Longest accepted free text per field (characters). */
export const DEMO_TEXT_LIMITS = { purpose: 500, category: 100, natural_language: 2000, merchant: 200, item: 200, time_limit: 40 } as const;

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function currency(o: Obj, path: string): string {
  const v = o.currency;
  if (v === undefined) throw new DemoInputError(`${path}.currency is required`);
  if (typeof v !== "string" || !/^[A-Z]{3}$/.test(v)) throw new DemoInputError(`${path}.currency must be three upper-case letters`);
  const refused = currencyRefusal(v);
  if (refused !== undefined) throw new DemoInputError(`${path}.currency ${v} ${refused}`);
  return v;
}

function amount(o: Obj, field: string, path: string, ccy: string): number {
  const v = o[field];
  const name = `${path}.${field}`;
  if (v === undefined) throw new DemoInputError(`${name} is required`);
  if (typeof v !== "number" || !Number.isFinite(v)) throw new DemoInputError(`${name} must be a number`);
  if (v < 0) throw new DemoInputError(`${name} must not be negative`);
  try {
    toMinor(v, ccy);
  } catch (e) {
    if (e instanceof MoneyError) throw new DemoInputError(`${name} ${String(v)} has more decimal places than ${ccy} allows`);
    throw e;
  }
  return v;
}

function text(o: Obj, field: keyof typeof DEMO_TEXT_LIMITS, path: string): string | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  const name = `${path}.${field}`;
  if (typeof v !== "string") throw new DemoInputError(`${name} must be a string`);
  if (v.length > DEMO_TEXT_LIMITS[field]) throw new DemoInputError(`${name} must be at most ${DEMO_TEXT_LIMITS[field]} characters`);
  return v;
}

function parseIntent(v: unknown): DemoIntent {
  if (v === undefined) throw new DemoInputError("intent is required");
  if (!isObject(v)) throw new DemoInputError("intent must be an object");
  const ccy = currency(v, "intent");
  const out: DemoIntent = { maximum_amount: amount(v, "maximum_amount", "intent", ccy), currency: ccy, include_expiry: true };
  const purpose = text(v, "purpose", "intent");
  if (purpose !== undefined) out.purpose = purpose;
  const category = text(v, "category", "intent");
  if (category !== undefined && category.trim() !== "") out.category = category;
  const nl = text(v, "natural_language", "intent");
  if (nl !== undefined) out.natural_language = nl;
  const include = v.include_expiry;
  if (include !== undefined && include !== null) {
    if (typeof include !== "boolean") throw new DemoInputError("intent.include_expiry must be a boolean");
    out.include_expiry = include;
  }
  const limit = text(v, "time_limit", "intent");
  if (limit !== undefined && limit !== "") {
    if (!isCalendarDay(limit) && parseInstant(limit) === undefined) {
      throw new DemoInputError("intent.time_limit must be a date (YYYY-MM-DD) or an RFC 3339 date-time");
    }
    out.time_limit = limit;
  }
  return out;
}

function parsePayment(v: unknown): DemoPayment {
  if (v === undefined) throw new DemoInputError("payment is required");
  if (!isObject(v)) throw new DemoInputError("payment must be an object");
  const ccy = currency(v, "payment");
  const out: DemoPayment = { amount: amount(v, "amount", "payment", ccy), currency: ccy };
  const merchant = text(v, "merchant", "payment");
  if (merchant !== undefined) out.merchant = merchant;
  const item = text(v, "item", "payment");
  if (item !== undefined) out.item = item;
  return out;
}

/** Checks a demo request body (see the module rules). Throws DemoInputError. */
export function parseDemoCheckRequest(body: unknown): DemoCheckRequest {
  if (!isObject(body)) throw new DemoInputError("request body must be a JSON object");
  return { intent: parseIntent(body.intent), payment: parsePayment(body.payment) };
}
