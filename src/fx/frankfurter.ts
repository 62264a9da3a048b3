/**
 * The rate source client: asks a Frankfurter-compatible server (see frankfurter-answer.ts for
 * the protocol) over HTTP through the outbound policy (src/http/outbound.ts).
 *
 * Promises: one request per question at a time (concurrent identical questions share the
 * request in flight); the whole exchange, headers and body, is bounded by `timeoutMs`; a body
 * over 64 KiB is refused; the source's address must pass the outbound policy at connect time
 * (REFUSED otherwise, nothing sent); 404 and 422 mean "no rate"; every other failure throws
 * FxSourceError (TIMEOUT, UNREACHABLE, REFUSED, BAD_STATUS, BAD_ANSWER). A "no rate" answer is
 * remembered for `noRateTtlMs` (SVC_FX_NO_RATE_TTL_MS), so a question the source cannot answer
 * does not reach it again meanwhile; rates themselves are cached by the store (rates.ts).
 */
import { STRICT_OUTBOUND, type OutboundPolicy, outboundRequest, OutboundError, type OutboundDeps } from "../http/index.js";
import { FxSourceError } from "./errors.js";
import { interpretAnswer, type SourceAnswer } from "./frankfurter-answer.js";

/** Where rates come from. */
export interface FxSource {
  /** The source's rate for one `currency` in `reference` on `day`, or none. Throws FxSourceError. */
  fetchRate(currency: string, reference: string, day: string): Promise<SourceAnswer>;
}

/** Options of `createFrankfurterSource`. */
export interface FrankfurterOptions {
  /** Base URL without trailing slash, e.g. `https://api.frankfurter.dev/v1`. */
  url: string;
  timeoutMs: number;
  /** Where the source may be (default: public addresses only). */
  policy?: OutboundPolicy;
  /** How long a "no rate" answer is remembered (ms, default 0: not at all). */
  noRateTtlMs?: number;
  /** Clock, epoch ms (default Date.now). */
  clock?: () => number;
  /** The resolver and socket opener (tests). */
  net?: OutboundDeps;
}

/** Largest answer body read from the source. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** Most "no rate" answers remembered (the oldest is forgotten first). */
const MAX_NO_RATE_ENTRIES = 10_000;

function failure(e: unknown, timeoutMs: number): FxSourceError {
  if (e instanceof FxSourceError) return e;
  if (e instanceof OutboundError) {
    if (e.code === "TIMEOUT" || e.code === "CONNECT_TIMEOUT") return new FxSourceError("TIMEOUT", `the source did not answer within ${timeoutMs} ms`);
    if (e.code === "REFUSED") return new FxSourceError("REFUSED", e.message);
    if (e.code === "TOO_LARGE") return new FxSourceError("BAD_ANSWER", `the source's answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  }
  return new FxSourceError("UNREACHABLE", "the source could not be reached");
}

async function ask(opts: FrankfurterOptions, currency: string, reference: string, day: string): Promise<SourceAnswer> {
  const target = new URL(`${opts.url}/${day}`);
  target.searchParams.set("base", currency);
  target.searchParams.set("symbols", reference);
  try {
    const res = await outboundRequest(
      opts.policy ?? STRICT_OUTBOUND,
      { url: target, headers: { accept: "application/json" }, timeoutMs: opts.timeoutMs, maxBodyBytes: MAX_ANSWER_BYTES },
      opts.net,
    );
    if (res.status === 404 || res.status === 422) return { kind: "none" };
    if (res.status !== 200) throw new FxSourceError("BAD_STATUS", `the source answered HTTP ${res.status}`);
    return interpretAnswer(res.body, currency, reference, day);
  } catch (e) {
    throw failure(e, opts.timeoutMs);
  }
}

/** A source speaking the Frankfurter v1 protocol at `opts.url`. */
export function createFrankfurterSource(opts: FrankfurterOptions): FxSource {
  const inFlight = new Map<string, Promise<SourceAnswer>>();
  const noRateUntil = new Map<string, number>();
  const clock = opts.clock ?? Date.now;
  const ttl = opts.noRateTtlMs ?? 0;
  const remember = (key: string, answer: SourceAnswer) => {
    if (answer.kind !== "none" || ttl <= 0) return;
    noRateUntil.delete(key);
    noRateUntil.set(key, clock() + ttl);
    for (const oldest of noRateUntil.keys()) {
      if (noRateUntil.size <= MAX_NO_RATE_ENTRIES) break;
      noRateUntil.delete(oldest);
    }
  };
  return {
    fetchRate(currency, reference, day) {
      const key = `${currency}/${reference}/${day}`;
      const until = noRateUntil.get(key);
      if (until !== undefined && until > clock()) return Promise.resolve({ kind: "none" });
      if (until !== undefined) noRateUntil.delete(key);
      const pending = inFlight.get(key);
      if (pending) return pending;
      const p = ask(opts, currency, reference, day)
        .then((answer) => (remember(key, answer), answer))
        .finally(() => inFlight.delete(key));
      inFlight.set(key, p);
      return p;
    },
  };
}
