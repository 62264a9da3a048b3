/**
 * The rate source client: asks a Frankfurter-compatible server (see frankfurter-answer.ts for
 * the protocol) over HTTP with the global `fetch` (or an injected one).
 *
 * Promises: one request per question at a time (concurrent identical questions share the
 * request in flight); the whole exchange, headers and body, is bounded by `timeoutMs`; a body
 * over 64 KiB is refused; 404 and 422 mean "no rate"; every other failure throws
 * FxSourceError (TIMEOUT, UNREACHABLE, BAD_STATUS, BAD_ANSWER). Nothing is cached here: the
 * store is the cache (rates.ts).
 */
import { readCapped } from "../http/read-capped.js";
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
  /** The HTTP fetcher (default: the global fetch). */
  fetch?: typeof fetch;
}

/** Largest answer body read from the source. */
export const MAX_ANSWER_BYTES = 64 * 1024;

function failure(e: unknown, signal: AbortSignal, timeoutMs: number): FxSourceError {
  if (e instanceof FxSourceError) return e;
  if (signal.aborted) return new FxSourceError("TIMEOUT", `the source did not answer within ${timeoutMs} ms`);
  return new FxSourceError("UNREACHABLE", "the source could not be reached");
}

async function ask(opts: FrankfurterOptions, currency: string, reference: string, day: string): Promise<SourceAnswer> {
  const target = new URL(`${opts.url}/${day}`);
  target.searchParams.set("base", currency);
  target.searchParams.set("symbols", reference);
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const doFetch = opts.fetch ?? fetch;
  try {
    const res = await doFetch(target, { signal, headers: { accept: "application/json" } });
    if (res.status === 404 || res.status === 422) {
      await res.body?.cancel().catch(() => {});
      return { kind: "none" };
    }
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => {});
      throw new FxSourceError("BAD_STATUS", `the source answered HTTP ${res.status}`);
    }
    return interpretAnswer(await readCapped(res, MAX_ANSWER_BYTES, () => new FxSourceError("BAD_ANSWER", `the source's answer is larger than ${MAX_ANSWER_BYTES} bytes`)), currency, reference, day);
  } catch (e) {
    throw failure(e, signal, opts.timeoutMs);
  }
}

/** A source speaking the Frankfurter v1 protocol at `opts.url`. */
export function createFrankfurterSource(opts: FrankfurterOptions): FxSource {
  const inFlight = new Map<string, Promise<SourceAnswer>>();
  return {
    fetchRate(currency, reference, day) {
      const key = `${currency}/${reference}/${day}`;
      const pending = inFlight.get(key);
      if (pending) return pending;
      const p = ask(opts, currency, reference, day).finally(() => inFlight.delete(key));
      inFlight.set(key, p);
      return p;
    },
  };
}
