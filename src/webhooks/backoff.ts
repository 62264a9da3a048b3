/**
 * The retry schedule of webhook deliveries: exponential backoff with "equal jitter" and a cap.
 *
 * Rule: after the n-th failed attempt (n >= 1) the base delay is `min(maxMs, minMs * 2^(n-1))`
 * and the actual delay is drawn uniformly from `[base / 2, base]`, so retries of many rows
 * that failed together spread out, yet the delay never exceeds the cap and still grows. After
 * `maxAttempts` failed attempts there is no further retry (`nextRetryDelay` returns null).
 */

/** The retry policy. */
export interface RetryPolicy {
  /** Base delay after the first failure (ms). */
  readonly minMs: number;
  /** Largest delay (ms). */
  readonly maxMs: number;
  /** Attempts in all, the first included; after the last one fails the row fails for good. */
  readonly maxAttempts: number;
}

/** The default policy: 1 s doubling to 10 min, 12 attempts (about 27 minutes of retries in all). */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ minMs: 1000, maxMs: 600_000, maxAttempts: 12 });

/** The base (un-jittered) delay after the `failedAttempts`-th failure. */
export function baseDelay(failedAttempts: number, policy: RetryPolicy): number {
  const n = Math.max(1, Math.floor(failedAttempts));
  // 2^(n-1) overflows to Infinity for huge n; min() with the cap keeps the result finite.
  return Math.min(policy.maxMs, policy.minMs * 2 ** Math.min(n - 1, 1024));
}

/**
 * Milliseconds to wait after `failedAttempts` failed attempts, or null when no attempt is left.
 * `random` returns a number in [0, 1) (default Math.random).
 */
export function nextRetryDelay(failedAttempts: number, policy: RetryPolicy, random: () => number = Math.random): number | null {
  if (failedAttempts >= policy.maxAttempts) return null;
  const base = baseDelay(failedAttempts, policy);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(base / 2 + r * (base / 2));
}
