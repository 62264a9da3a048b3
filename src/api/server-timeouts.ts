/**
 * How long a client may hold a connection of the data plane, so slow clients (a request sent
 * a byte at a time, headers never finished, a body that never ends, an idle keep-alive
 * connection) cannot exhaust it. Read once with the other settings (docs/reference/settings.md).
 *
 * | Setting                          | Default | Meaning                                                  |
 * |----------------------------------|---------|----------------------------------------------------------|
 * | WRIT_HTTP_HEADERS_TIMEOUT_MS     | 10000   | the request line and headers must arrive within this     |
 * | WRIT_HTTP_REQUEST_TIMEOUT_MS     | 30000   | the whole request (headers and body) within this         |
 * | WRIT_HTTP_KEEP_ALIVE_TIMEOUT_MS  | 5000    | an idle keep-alive connection is closed after this (+1 s)|
 * | WRIT_HTTP_CONNECTION_TIMEOUT_MS  | 60000   | a connection with no traffic either way is closed        |
 *
 * The headers limit is at most the request limit (a larger one is lowered, with a start-up
 * problem). Node checks the first two periodically; `checkIntervalMs` (half the smaller of
 * them, 100..5000 ms) is how often, so a slow request is closed within its limit plus that.
 * A request over its limit is answered 408 and its connection closed. Never throws.
 */
import { envInteger, envIntegerWithin, type Env } from "../core/env/index.js";

/** The loaded timeouts (milliseconds). */
export interface ServerTimeouts {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly connectionTimeoutMs: number;
  /** How often node looks for requests past the first two limits. */
  readonly checkIntervalMs: number;
}

/** Reads the WRIT_HTTP_*_TIMEOUT_MS settings; problems go to `problems`. */
export function loadServerTimeouts(env: Env, problems: string[]): ServerTimeouts {
  const requestTimeoutMs = envInteger(env, "WRIT_HTTP_REQUEST_TIMEOUT_MS", { min: 100, max: 3_600_000, dflt: 30_000 }, problems);
  const headersTimeoutMs = envIntegerWithin(
    env,
    "WRIT_HTTP_HEADERS_TIMEOUT_MS",
    { min: 100, max: 3_600_000, dflt: 10_000 },
    { atMost: ["WRIT_HTTP_REQUEST_TIMEOUT_MS", requestTimeoutMs] },
    problems,
  );
  return Object.freeze({
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: envInteger(env, "WRIT_HTTP_KEEP_ALIVE_TIMEOUT_MS", { min: 100, max: 3_600_000, dflt: 5000 }, problems),
    connectionTimeoutMs: envInteger(env, "WRIT_HTTP_CONNECTION_TIMEOUT_MS", { min: 100, max: 3_600_000, dflt: 60_000 }, problems),
    checkIntervalMs: Math.min(5000, Math.max(100, Math.floor(headersTimeoutMs / 2))),
  });
}
