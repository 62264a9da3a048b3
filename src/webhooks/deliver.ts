/**
 * One delivery attempt: POST a signed alert to a subscriber's URL.
 *
 * Promise: the attempt goes only where the outbound policy allows (src/http/outbound.ts:
 * checked at connect time; a refused destination is a failed attempt whose error says so, and
 * nothing is sent); connecting ends within `connectTimeoutMs` and the whole attempt within
 * `timeoutMs`, or at once when `signal` aborts; it never throws. Redirects are not followed (a
 * 3xx is a failed attempt). Only http: and https: URLs are tried. A 2xx status is success;
 * anything else is a failure with a short, secret-free description for `last_error`. The
 * answer's body is never read.
 */
import { outboundRequest, OutboundError, type OutboundDeps, type OutboundPolicy } from "../http/index.js";

/** Request headers of a delivery (names in lower case). */
export const EVENT_ID_HEADER = "x-writ-event-id";
export const ATTEMPT_HEADER = "x-writ-delivery-attempt";

/** What one attempt did. */
export type AttemptResult =
  { readonly ok: true; readonly status: number } | { readonly ok: false; readonly error: string; readonly status?: number; readonly aborted?: boolean };

/** One attempt's input. */
export interface AttemptInput {
  url: string;
  /** The JSON body, already serialised. */
  body: string;
  eventId: string;
  /** 1 for the first attempt. */
  attempt: number;
  timeoutMs: number;
  /** Time limit of connecting (default and at most `timeoutMs`). */
  connectTimeoutMs?: number;
  /** Where deliveries may go (WRIT_OUTBOUND_*). */
  policy: OutboundPolicy;
  /** Aborts the attempt early (worker shutdown); the result then has `aborted: true`. */
  signal?: AbortSignal;
  /** The resolver and socket opener (tests). */
  net?: OutboundDeps;
}

/** Longest `last_error` text kept. */
const MAX_ERROR = 300;

function describeFailure(err: OutboundError, input: AttemptInput): string {
  switch (err.code) {
    case "TIMEOUT":
      return `timed out after ${input.timeoutMs} ms`;
    case "CONNECT_TIMEOUT":
      return `could not connect within ${Math.min(input.connectTimeoutMs ?? input.timeoutMs, input.timeoutMs)} ms`;
    case "REFUSED":
      return err.message.slice(0, MAX_ERROR);
    case "BAD_URL":
      return `webhook_url is ${err.message}`;
    default:
      return `request failed: ${err.message}`.slice(0, MAX_ERROR);
  }
}

/** Sends one attempt (see the module comment). */
export async function deliverOnce(input: AttemptInput): Promise<AttemptResult> {
  try {
    const res = await outboundRequest(
      input.policy,
      {
        url: input.url,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "writ-webhooks/1",
          [EVENT_ID_HEADER]: input.eventId,
          [ATTEMPT_HEADER]: String(input.attempt),
        },
        body: input.body,
        timeoutMs: input.timeoutMs,
        ...(input.connectTimeoutMs !== undefined ? { connectTimeoutMs: input.connectTimeoutMs } : {}),
        ...(input.signal ? { signal: input.signal } : {}),
        maxBodyBytes: 0,
      },
      input.net,
    );
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    const what = res.status >= 300 && res.status < 400 ? `redirect not followed (HTTP ${res.status})` : `HTTP ${res.status}`;
    return { ok: false, status: res.status, error: what };
  } catch (e) {
    const err = e instanceof OutboundError ? e : new OutboundError("NETWORK", String(e));
    if (err.code === "ABORTED") return { ok: false, error: "delivery interrupted by shutdown", aborted: true };
    return { ok: false, error: describeFailure(err, input) };
  }
}
