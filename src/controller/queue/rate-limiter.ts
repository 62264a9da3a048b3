/**
 * How long a failed key waits before it is retried: client-go's workqueue rate limiters.
 *
 * - `ItemExponentialLimiter`: per key, `base * 2^failures` (5 ms doubling to 1000 s by
 *   default, as controller-runtime), reset by `forget`.
 * - `TokenBucketLimiter`: one bucket for all keys (10 per second, burst 100 by default, as
 *   client-go's default controller rate limiter): a retry takes a token; without one it is
 *   scheduled when the bucket will have refilled (tokens are reserved ahead, so a burst of
 *   retries spreads out at the bucket's rate).
 * - `MaxOfLimiter`: the longest wait of several: the default is max(exponential, bucket).
 *
 * Pure apart from the clock they are given.
 */
import type { Clock } from "../../core/time/index.js";

/** A retry delay policy. */
export interface RateLimiter {
  /** Delay before `key`'s next retry, ms; counts one more failure of `key`. */
  when(key: string): number;
  /** Forgets `key`'s failures (it succeeded). */
  forget(key: string): void;
  /** Failures of `key` counted so far. */
  numRequeues(key: string): number;
}

/** Per-key exponential backoff. */
export class ItemExponentialLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {}

  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2^n overflows to Infinity long after maxMs; cap the exponent anyway.
    return Math.min(this.maxMs, this.baseMs * 2 ** Math.min(n, 60));
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/** One token bucket shared by every key (Go's rate.Limiter reservations). */
export class TokenBucketLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock,
  ) {
    if (!(qps > 0) || !(burst >= 1)) throw new RangeError("a token bucket needs qps > 0 and burst >= 1");
    this.tokens = burst;
    this.last = clock.now();
  }

  when(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The longest delay of several limiters. */
export class MaxOfLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(key));
    return max;
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(key));
    return max;
  }
}

/** Settings of the default limiter. */
export interface RateLimitSettings {
  baseDelayMs: number;
  maxDelayMs: number;
  qps: number;
  burst: number;
}

/** controller-runtime's defaults: 5 ms .. 1000 s per item, 10 qps / burst 100 overall. */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = { baseDelayMs: 5, maxDelayMs: 1_000_000, qps: 10, burst: 100 };

/** max(per-item exponential, token bucket), like controller-runtime's default controller rate limiter. */
export function defaultRateLimiter(clock: Clock, s: RateLimitSettings = DEFAULT_RATE_LIMITS): RateLimiter {
  return new MaxOfLimiter(new ItemExponentialLimiter(s.baseDelayMs, s.maxDelayMs), new TokenBucketLimiter(s.qps, s.burst, clock));
}
