/**
 * One delivery attempt: POST a signed alert to a subscriber's URL.
 *
 * Promise: the attempt ends within `timeoutMs` (connect, headers and the drained body are all
 * under one AbortSignal), or at once when `signal` aborts; it never throws. Redirects are not
 * followed (a 3xx is a failed attempt). Only http: and https: URLs are tried. A 2xx status is
 * success; anything else is a failure with a short, secret-free description for `last_error`.
 */

/** Request headers of a delivery (names in lower case). */
export const EVENT_ID_HEADER = "x-writ-event-id";
export const ATTEMPT_HEADER = "x-writ-delivery-attempt";

/** What one attempt did. */
export type AttemptResult =
  | { readonly ok: true; readonly status: number }
  | { readonly ok: false; readonly error: string; readonly status?: number; readonly aborted?: boolean };

/** One attempt's input. */
export interface AttemptInput {
  url: string;
  /** The JSON body, already serialised. */
  body: string;
  eventId: string;
  /** 1 for the first attempt. */
  attempt: number;
  timeoutMs: number;
  /** Aborts the attempt early (worker shutdown); the result then has `aborted: true`. */
  signal?: AbortSignal;
}

/** Longest `last_error` text kept. */
const MAX_ERROR = 300;

function describeFailure(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timed out after ${timeoutMs} ms`;
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause && typeof cause.code === "string") return `request failed: ${cause.code}`;
  if (cause && typeof cause.message === "string") return `request failed: ${cause.message}`.slice(0, MAX_ERROR);
  return `request failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, MAX_ERROR);
}

/** Sends one attempt (see the module comment). */
export async function deliverOnce(input: AttemptInput): Promise<AttemptResult> {
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    return { ok: false, error: "webhook_url is not a URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, error: "webhook_url is not http or https" };
  const timeout = AbortSignal.timeout(input.timeoutMs);
  const signal = input.signal ? AbortSignal.any([timeout, input.signal]) : timeout;
  try {
    const res = await fetch(url, {
      method: "POST",
      redirect: "manual",
      signal,
      headers: {
        "content-type": "application/json",
        "user-agent": "writ-webhooks/1",
        [EVENT_ID_HEADER]: input.eventId,
        [ATTEMPT_HEADER]: String(input.attempt),
      },
      body: input.body,
    });
    // Drain the (ignored) body under the same deadline so the connection can be reused.
    await res.arrayBuffer().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    const what = res.status >= 300 && res.status < 400 ? `redirect not followed (HTTP ${res.status})` : `HTTP ${res.status}`;
    return { ok: false, status: res.status, error: what };
  } catch (err) {
    if (input.signal?.aborted && !timeout.aborted) return { ok: false, error: "delivery interrupted by shutdown", aborted: true };
    return { ok: false, error: describeFailure(err, timeout.aborted, input.timeoutMs) };
  }
}
