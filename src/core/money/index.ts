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
 * ISO 4217 minor units (List One), by exception: every known code not listed here has 2.
 * Taken from ISO 4217, not from ICU/CLDR, whose display digits differ (CLDR shows HUF, COP,
 * IDR, PKR and IQD with 0 decimals; ISO gives HUF, COP, IDR, PKR 2 and IQD 3).
 */
const ISO_4217_MINOR_UNITS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/**
 * ISO 4217 codes whose minor unit is "N.A.": precious metals, bond-market units, SDRs, the
 * testing code `XTS` and "no currency" `XXX`. They are currencies (a rate can name them) but
 * not payment currencies: no amount in them is accepted.
 */
const ISO_4217_NO_MINOR_UNIT = ["XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XDR", "XPD", "XPT", "XSU", "XTS", "XUA", "XXX"];

/**
 * ISO 4217 codes that ICU does not list as in use (`Intl.supportedValuesOf("currency")`):
 * fund codes and recent codes, besides ISO_4217_NO_MINOR_UNIT.
 */
const ISO_4217_NOT_IN_ICU = ["BOV", "CHE", "CHW", "CLF", "COU", "MXV", "USN", "UYI", "UYW", "VED"];

let known: ReadonlySet<string> | undefined;
const noMinorUnit: ReadonlySet<string> = new Set(ISO_4217_NO_MINOR_UNIT);

/** The ISO 4217 codes: ICU's list of codes in use plus the codes ICU does not list. */
function knownCurrencies(): ReadonlySet<string> {
  known ??= new Set([...Intl.supportedValuesOf("currency"), ...ISO_4217_NOT_IN_ICU, ...ISO_4217_NO_MINOR_UNIT]);
  return known;
}

/**
 * True for an ISO 4217 code, payment currency or not (`XAU`, `XTS` included): what a rate
 * lookup may name. A well-formed code that names no currency (`QQQ`) is false.
 */
export function isIsoCurrency(code: unknown): code is string {
  return typeof code === "string" && CURRENCY_RE.test(code) && knownCurrencies().has(code);
}

/**
 * True for a payment currency: an ISO 4217 code with a minor unit, which is every code
 * amounts may be in. False for codes ISO gives no minor unit (`XTS`, `XXX`, metals, `XDR`)
 * and for well-formed codes that name no currency (`QQQ`): no rate source or ledger knows them.
 */
export function isCurrency(code: unknown): code is string {
  return isIsoCurrency(code) && !noMinorUnit.has(code);
}

/**
 * Why `code` cannot carry an amount, as a predicate for "<field> <code> ...": `is not a known
 * currency` (`QQQ`), `is not a payment currency (ISO 4217 gives it no minor unit)` (`XTS`); or
 * undefined for a payment currency.
 */
export function currencyRefusal(code: string): string | undefined {
  if (isCurrency(code)) return undefined;
  return isIsoCurrency(code) ? "is not a payment currency (ISO 4217 gives it no minor unit)" : "is not a known currency";
}

/**
 * ISO 4217 minor-unit exponent (USD 2, JPY 0, KWD 3, HUF 2, IQD 3). Throws MoneyError on codes
 * that are not payment currencies.
 */
export function currencyExponent(code: string): number {
  const hit = exponentCache.get(code);
  if (hit !== undefined) return hit;
  if (!CURRENCY_RE.test(code)) throw new MoneyError(`currency must be three upper-case letters, got ${JSON.stringify(code)}`);
  if (noMinorUnit.has(code)) throw new MoneyError(`${code} is not a payment currency (ISO 4217 gives it no minor unit)`);
  if (!knownCurrencies().has(code)) throw new MoneyError(`unknown currency ${code}`);
  const digits = ISO_4217_MINOR_UNITS[code] ?? 2;
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
export { addSpend, agreementSpentIn, agreementTotalAs, checkBudget, ledgerCurrencyOf, remainingOf, spentIn } from "./budget.js";
export {
  CALENDAR_PERIODS,
  calendarWindow,
  checkPeriod,
  isTimeZone,
  parseRollingDuration,
  periodLine,
  periodName,
  mandatePeriods,
  preparePeriods,
  startOfLocalDate,
  windowAt,
  type CalendarPeriod,
  type PeriodLimit,
  type PeriodLine,
  type PreparedPeriodLimit,
  type PreparedPeriods,
  type Recurrence,
  type WindowAt,
  type WindowUsage,
} from "./periods.js";
