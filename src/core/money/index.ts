/**
 * Money as integer minor units (bigint). Amounts arrive as JSON numbers or decimal strings
 * and are converted exactly, using the currency's ISO 4217 exponent; an amount with more
 * fraction digits than the currency allows is refused, never rounded. Nothing here ever adds
 * floats.
 */

const CURRENCY_RE = /^[A-Z]{3}$/;
const DECIMAL_RE = /^(\d+)(?:\.(\d+))?$/;
const exponentCache = new Map<string, number>();

/** An amount in a currency, in integer minor units. */
export interface Money {
  readonly currency: string;
  readonly minor: bigint;
}

/** Thrown for an amount or currency that cannot be used. The message says why. */
export class MoneyError extends Error {
  override readonly name = "MoneyError";
}

/**
 * ISO 4217 codes that ICU does not list as in use (`Intl.supportedValuesOf("currency")`):
 * precious metals, bond-market units, fund codes, the testing code and "no currency".
 */
const ISO_4217_NOT_IN_ICU = ["XAU", "XAG", "XPT", "XPD", "XBA", "XBB", "XBC", "XBD", "XUA", "XTS", "XXX", "BOV", "CHE", "CHW", "CLF", "COU", "MXV", "USN", "UYI", "UYW", "VED"];

let known: ReadonlySet<string> | undefined;

/** The ISO 4217 codes: ICU's list of codes in use plus ISO_4217_NOT_IN_ICU. */
function knownCurrencies(): ReadonlySet<string> {
  known ??= new Set([...Intl.supportedValuesOf("currency"), ...ISO_4217_NOT_IN_ICU]);
  return known;
}

/**
 * True for an ISO 4217 currency code: three upper-case letters that ICU lists as a currency
 * in use, or one of the other ISO codes (metals, funds). A well-formed code that names no
 * currency (`QQQ`) is false: Intl would format it, but no rate source or ledger knows it.
 */
export function isCurrency(code: unknown): code is string {
  if (typeof code !== "string" || !CURRENCY_RE.test(code) || !knownCurrencies().has(code)) return false;
  try {
    currencyExponent(code);
    return true;
  } catch {
    return false;
  }
}

/** ISO 4217 minor-unit exponent (USD 2, JPY 0, KWD 3). Throws MoneyError on unknown codes. */
export function currencyExponent(code: string): number {
  const hit = exponentCache.get(code);
  if (hit !== undefined) return hit;
  if (!CURRENCY_RE.test(code)) throw new MoneyError(`currency must be three upper-case letters, got ${JSON.stringify(code)}`);
  let digits: number;
  try {
    digits = new Intl.NumberFormat("en", { style: "currency", currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    throw new MoneyError(`unknown currency ${code}`);
  }
  exponentCache.set(code, digits);
  return digits;
}

/** Plain decimal text of a JSON number (no exponent), or undefined for non-finite/negative. */
function decimalText(amount: number | string): string | undefined {
  if (typeof amount === "string") return DECIMAL_RE.test(amount) ? amount : undefined;
  if (!Number.isFinite(amount) || amount < 0) return undefined;
  // toString gives the shortest round-trip form; expand exponents without float arithmetic.
  const s = String(amount);
  if (!s.includes("e")) return s;
  const [mant = "", expPart = "0"] = s.split("e");
  const exp = Number(expPart);
  const [ip = "", fp = ""] = mant.split(".");
  const digits = ip + fp;
  const point = ip.length + exp;
  if (point <= 0) return `0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + "0".repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Converts a major-unit amount (12.34) in `currency` to minor units (1234n). */
export function toMinor(amount: number | string, currency: string): bigint {
  const exp = currencyExponent(currency);
  const text = decimalText(amount);
  if (text === undefined) throw new MoneyError(`amount must be a finite number at or above 0, got ${String(amount)}`);
  const m = DECIMAL_RE.exec(text);
  if (!m) throw new MoneyError(`amount ${text} is not a decimal number`);
  const whole = m[1] ?? "0";
  const frac = (m[2] ?? "").replace(/0+$/, "");
  if (frac.length > exp) throw new MoneyError(`amount ${text} has more than ${exp} decimal places for ${currency}`);
  return BigInt(whole) * 10n ** BigInt(exp) + BigInt(frac.padEnd(exp, "0") || "0");
}

/** Minor units back to a plain decimal string in major units ("12.34"). */
export function formatMinor(minor: bigint, currency: string): string {
  const exp = currencyExponent(currency);
  const neg = minor < 0n;
  const abs = (neg ? -minor : minor).toString().padStart(exp + 1, "0");
  const out = exp === 0 ? abs : `${abs.slice(0, -exp)}.${abs.slice(-exp)}`;
  return neg ? `-${out}` : out;
}

/** Minor units as a JSON number in major units, for wire formats that use numbers. */
export function minorToNumber(minor: bigint, currency: string): number {
  return Number(formatMinor(minor, currency));
}

/** An exact rate as a fraction of integers (parsed from a decimal string such as "1.0842"). */
export interface Rate {
  readonly num: bigint;
  readonly den: bigint;
}

/** Parses a decimal rate string exactly. Throws MoneyError on anything else. */
export function parseRate(text: string): Rate {
  const m = DECIMAL_RE.exec(text);
  if (!m) throw new MoneyError(`rate ${JSON.stringify(text)} is not a decimal string`);
  const frac = m[2] ?? "";
  const num = BigInt((m[1] ?? "0") + frac);
  if (num === 0n) throw new MoneyError("rate must be above zero");
  return { num, den: 10n ** BigInt(frac.length) };
}

/**
 * Converts minor units of `from` to minor units of `to` at `rate` (units of `to` per unit of
 * `from`), rounding up so that a converted spend is never understated against a budget.
 */
export function convertMinor(minor: bigint, from: string, to: string, rate: Rate): bigint {
  const scaleFrom = 10n ** BigInt(currencyExponent(from));
  const scaleTo = 10n ** BigInt(currencyExponent(to));
  const num = minor * rate.num * scaleTo;
  const den = rate.den * scaleFrom;
  return (num + den - 1n) / den;
}
