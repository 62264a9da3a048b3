/**
 * Jittered exponential backoff for reconnecting watches: attempt n (from 1) waits
 * `initial * 2^(n-1)` capped at `max`, scaled by a random factor in [1 - jitter, 1] ("equal
 * jitter" by default, 0.5), so many clients that lost the same API server do not come back in
 * step. Pure: the random source is a parameter.
 */

/** Backoff parameters. */
export interface BackoffPolicy {
  /** Delay of the first retry, ms. */
  initialMs: number;
  /** Largest delay, ms. */
  maxMs: number;
  /** Share of the delay that is random, 0 to 1 (default 0.5). */
  jitter?: number;
}

/** client-go's reflector backoff: 800 ms doubling to 30 s. */
export const WATCH_BACKOFF: BackoffPolicy = { initialMs: 800, maxMs: 30_000, jitter: 0.5 };

/** Delay before retry `attempt` (1 = the first retry), ms. */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(attempt));
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(n - 1, 40));
  const jitter = Math.min(1, Math.max(0, policy.jitter ?? 0.5));
  const r = Math.min(1, Math.max(0, random()));
  return Math.round(base * (1 - jitter * r));
}

/** A random integer in [min, max] (inclusive), e.g. the server-side timeout of one watch. */
export function randomBetween(min: number, max: number, random: () => number = Math.random): number {
  return min + Math.floor(Math.min(0.999999, Math.max(0, random())) * (max - min + 1));
}
