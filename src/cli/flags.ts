/**
 * Values of common flags, checked: required flags, RFC 3339 times, durations, positive
 * integers, server URLs and `--set field=value` pairs. Every failure is a usage error (exit 2)
 * naming the flag.
 */
import { usageError } from "./errors.js";
import { formatInstant, parseInstant } from "../core/time/index.js";

/** The value of a required flag. */
export function required<T>(value: T | undefined, flag: string, what = "a value"): T {
  if (value === undefined || value === "") throw usageError(`--${flag} is required (${what})`);
  return value;
}

/** `--at`: an RFC 3339 time as given, default `now` (UTC). */
export function atFlag(value: string | undefined, now: Date, flag = "at"): string {
  if (value === undefined) return formatInstant(now.getTime()).replace(/\.000Z$/, "Z");
  const ms = parseInstant(value);
  if (ms === undefined) throw usageError(`--${flag} must be an RFC 3339 date-time such as 2026-01-02T03:04:05Z, not ${JSON.stringify(value)}`);
  return value;
}

const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A duration such as `500ms`, `2s`, `1m`, `1h` in milliseconds (at least `minMs`). */
export function durationFlag(value: string, flag: string, minMs = 100): number {
  const m = DURATION_RE.exec(value.trim());
  const ms = m ? Number(m[1]) * (UNIT_MS[m[2] ?? ""] ?? Number.NaN) : Number.NaN;
  if (!Number.isFinite(ms) || ms < minMs || ms > 24 * 3_600_000) {
    throw usageError(`--${flag} must be a duration between ${minMs}ms and 24h such as 2s or 1m, not ${JSON.stringify(value)}`);
  }
  return Math.round(ms);
}

/** A positive safe integer such as a log sequence. */
export function positiveIntFlag(value: string, flag: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw usageError(`--${flag} must be a positive whole number, not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/**
 * A server base URL (http or https, no query or fragment), without a trailing slash. A plain
 * http URL to another host than loopback is allowed (in-cluster service names) but callers
 * that send a credential warn about it.
 */
export function serverFlag(value: string | undefined, flag = "server"): URL {
  const text = required(value, flag, "the server's base URL, e.g. http://127.0.0.1:8080");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`--${flag} must be a URL such as http://127.0.0.1:8080, not ${JSON.stringify(text)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw usageError(`--${flag} must be an http or https URL`);
  if (url.username !== "" || url.password !== "") throw usageError(`--${flag} must not carry credentials in the URL`);
  if (url.search !== "" || url.hash !== "") throw usageError(`--${flag} must not have a query or fragment`);
  url.pathname = url.pathname.replace(/\/+$/, "");
  return url;
}

/** True for a loopback host (localhost, 127.0.0.0/8, ::1). */
export function isLoopback(url: URL): boolean {
  const h = url.hostname;
  return h === "localhost" || h === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** `field=value` pairs of a repeated `--set`, in order. */
export function setPairs(values: readonly string[] | undefined, flag = "set"): Array<[string, string]> {
  return (values ?? []).map((pair) => {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw usageError(`--${flag} takes field=value, not ${JSON.stringify(pair)}`);
    return [pair.slice(0, eq).trim(), pair.slice(eq + 1)];
  });
}
