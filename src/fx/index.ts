/**
 * Reference-currency rates: settings, the Frankfurter source client, and the store-first
 * lookup used by `GET /v1/fx` and the verify path (docs/fx.md).
 */
export { DEFAULT_FX_TIMEOUT_MS, loadFxSettings, type FxSettings } from "./settings.js";
export { FxSourceError, type FxSourceErrorCode } from "./errors.js";
export { createFrankfurterSource, MAX_ANSWER_BYTES, type FrankfurterOptions, type FxSource } from "./frankfurter.js";
export { interpretAnswer, MAX_CARRY_DAYS, type SourceAnswer } from "./frankfurter-answer.js";
export { addDays, hasDayForm, isUtcDay, utcDayOf } from "./day.js";
export { JsonNumber, JsonSyntaxError, parseJsonKeepingNumbers, plainDecimal, type JsonValue } from "./json-numbers.js";
export { fxSourceFor, lookupRate, rateFor, type FxContext, type RateLookup } from "./rates.js";
