/**
 * What a Frankfurter answer means for one question "units of `reference` per one `currency`
 * on `day`". Pure. The protocol (Frankfurter v1, lineofflight/frankfurter):
 *
 *   GET {url}/{YYYY-MM-DD}?base={currency}&symbols={reference}
 *   200 {"amount":1.0,"base":"EUR","date":"2025-01-03","rates":{"USD":1.0321}}
 *   404 {"message":"not found"}  (an unknown currency, or no data on or before the day)
 *   422 {"message":"..."}        (arguments the source refuses)
 *
 * Frankfurter answers the last business day on or before the one asked (`date` of a weekend
 * or holiday is the previous publication): that IS the day's reference rate in its semantics,
 * so Writ accepts it, as long as it is at most 14 days older than the day (older counts as no
 * rate). A `date` after the day asked, another `base`, an `amount` other than 1, a rate that is
 * not a positive number, or a body that is not that object is not an answer (BAD_ANSWER).
 * The rate keeps the JSON number's exact text (an exponent form is expanded to a plain
 * decimal by moving the point, never through a float) and must pass `parseRate`.
 */
import { MoneyError, parseRate } from "../core/money/index.js";
import { addDays, isUtcDay } from "./day.js";
import { FxSourceError } from "./errors.js";
import { JsonNumber, JsonSyntaxError, parseJsonKeepingNumbers, plainDecimal, type JsonValue } from "./json-numbers.js";

/** A source's answer: a rate (with the day the source published it) or none. */
export type SourceAnswer = { kind: "rate"; rate: string; sourceDay: string } | { kind: "none" };

/** Oldest publication accepted for a day: this many days before it. */
export const MAX_CARRY_DAYS = 14;

function bad(message: string): never {
  throw new FxSourceError("BAD_ANSWER", message);
}

function member(obj: Map<string, JsonValue>, name: string): JsonValue | undefined {
  return obj.get(name);
}

/** Interprets a 200 body for the question (currency, reference, day). Throws FxSourceError BAD_ANSWER. */
export function interpretAnswer(body: string, currency: string, reference: string, day: string): SourceAnswer {
  let doc: JsonValue;
  try {
    doc = parseJsonKeepingNumbers(body);
  } catch (e) {
    if (e instanceof JsonSyntaxError) bad(`the source's answer is not JSON (${e.message})`);
    throw e;
  }
  if (!(doc instanceof Map)) bad("the source's answer is not a JSON object");
  const base = member(doc, "base");
  if (base !== undefined && base !== currency) bad(`the source answered base ${JSON.stringify(base)} for ${currency}`);
  const amount = member(doc, "amount");
  if (amount !== undefined) {
    const text = amount instanceof JsonNumber ? plainDecimal(amount.text) : undefined;
    if (text === undefined || !/^0*1(\.0*)?$/.test(text)) bad("the source's answer is not for an amount of 1");
  }
  const date = member(doc, "date");
  if (!isUtcDay(date)) bad("the source's answer has no date YYYY-MM-DD");
  if (date > day) bad(`the source answered ${date} for ${day}`);
  const rates = member(doc, "rates");
  if (!(rates instanceof Map)) bad("the source's answer has no rates object");
  const value = rates.get(reference);
  if (value === undefined) return { kind: "none" };
  if (date < addDays(day, -MAX_CARRY_DAYS)) return { kind: "none" };
  if (!(value instanceof JsonNumber)) bad(`the source's ${reference} rate is not a number`);
  const rate = plainDecimal(value.text);
  if (rate === undefined) bad(`the source's ${reference} rate ${value.text} is not a usable decimal`);
  try {
    parseRate(rate);
  } catch (e) {
    if (e instanceof MoneyError) bad(`the source's ${reference} rate ${value.text} is not above zero`);
    throw e;
  }
  return { kind: "rate", rate, sourceDay: date };
}
