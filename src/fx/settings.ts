/**
 * Settings of the rate lookup, read once with the other settings:
 *
 * - `SVC_FX_SOURCE_URL` (the spec's `{fx_source_url}`): base URL of a Frankfurter-compatible
 *   source, http or https, without query or fragment (for example
 *   `https://api.frankfurter.dev/v1`). Unset: every lookup that needs the source answers 502.
 *   Set but unusable: the same, plus a start-up problem.
 * - `SVC_FX_TIMEOUT_MS`: how long one source request may take, headers and body, integer
 *   1..60000, default 2000. Anything else: the default, plus a start-up problem.
 * - `SVC_FX_NO_RATE_TTL_MS`: how long the source's "no rate" answer for one question
 *   (currency, reference, day) is remembered in memory, so repeated questions the source
 *   cannot answer do not reach it again; 0..86400000, default 600000 (10 minutes); 0: never.
 *
 * The source's address must also pass the outbound policy (WRIT_OUTBOUND_*, src/http).
 */
import { envInteger, envText, type Env } from "../core/env/index.js";

/** The loaded rate settings. */
export interface FxSettings {
  /** Base URL without trailing slashes, or null when unset or unusable. */
  readonly sourceUrl: string | null;
  /** Source request timeout in milliseconds. */
  readonly timeoutMs: number;
  /** How long a "no rate" answer is remembered (ms; 0: never). */
  readonly noRateTtlMs: number;
}

/** Default of SVC_FX_NO_RATE_TTL_MS. */
export const DEFAULT_FX_NO_RATE_TTL_MS = 600_000;

/** Default of SVC_FX_TIMEOUT_MS. */
export const DEFAULT_FX_TIMEOUT_MS = 2000;

function sourceUrl(raw: string | null, problems: string[]): string | null {
  if (raw === null) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    problems.push("SVC_FX_SOURCE_URL is not a URL; rate lookups will answer 502");
    return null;
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.search !== "" || u.hash !== "" || u.username !== "" || u.password !== "") {
    problems.push("SVC_FX_SOURCE_URL must be an http(s) URL without query, fragment or credentials; rate lookups will answer 502");
    return null;
  }
  return u.toString().replace(/\/+$/, "");
}

/** Reads SVC_FX_SOURCE_URL, SVC_FX_TIMEOUT_MS and SVC_FX_NO_RATE_TTL_MS from `env`; problems go to `problems`. */
export function loadFxSettings(env: Env, problems: string[]): FxSettings {
  return Object.freeze({
    sourceUrl: sourceUrl(envText(env, "SVC_FX_SOURCE_URL"), problems),
    timeoutMs: envInteger(env, "SVC_FX_TIMEOUT_MS", { min: 1, max: 60_000, dflt: DEFAULT_FX_TIMEOUT_MS }, problems),
    noRateTtlMs: envInteger(env, "SVC_FX_NO_RATE_TTL_MS", { min: 0, max: 86_400_000, dflt: DEFAULT_FX_NO_RATE_TTL_MS }, problems),
  });
}
