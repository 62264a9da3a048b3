/**
 * The webhook delivery settings (BUR_WEBHOOK_*), read by `loadSettings` in src/api/settings.ts.
 *
 * Promise: never throws. A value that is not a whole number in its range is reported in
 * `problems` and the default is used.
 *
 * | Setting                     | Default | Meaning                                             |
 * |-----------------------------|---------|-----------------------------------------------------|
 * | BUR_WEBHOOK_WORKER          | 1       | 0: this process runs no delivery worker             |
 * | BUR_WEBHOOK_TIMEOUT_MS      | 5000    | time limit of one delivery request                  |
 * | BUR_WEBHOOK_MAX_ATTEMPTS    | 12      | attempts before a delivery is marked failed         |
 * | BUR_WEBHOOK_BACKOFF_MIN_MS  | 1000    | delay after the first failure (doubles per failure) |
 * | BUR_WEBHOOK_BACKOFF_MAX_MS  | 600000  | largest delay between attempts                      |
 * | BUR_WEBHOOK_CONCURRENCY     | 8       | requests in flight per process                      |
 * | BUR_WEBHOOK_POLL_MS         | 1000    | outbox poll interval (new rows also wake it)        |
 */

/** The typed webhook settings. */
export interface WebhookSettings {
  readonly worker: boolean;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly backoffMinMs: number;
  readonly backoffMaxMs: number;
  readonly concurrency: number;
  readonly pollMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** A whole number in [min, max] from `env[name]`, or `fallback` (noting a problem when set but bad). */
function wholeNumber(env: Env, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max)) {
    problems.push(`${name} must be a whole number from ${min} to ${max}; using ${fallback}`);
    return fallback;
  }
  return n;
}

/** Reads the BUR_WEBHOOK_* settings; problems are appended to `problems`. */
export function loadWebhookSettings(env: Env, problems: string[]): WebhookSettings {
  const backoffMinMs = wholeNumber(env, "BUR_WEBHOOK_BACKOFF_MIN_MS", 1000, 1, 86_400_000, problems);
  let backoffMaxMs = wholeNumber(env, "BUR_WEBHOOK_BACKOFF_MAX_MS", 600_000, 1, 86_400_000, problems);
  if (backoffMaxMs < backoffMinMs) {
    problems.push("BUR_WEBHOOK_BACKOFF_MAX_MS is below BUR_WEBHOOK_BACKOFF_MIN_MS; using the minimum");
    backoffMaxMs = backoffMinMs;
  }
  return Object.freeze({
    worker: env.BUR_WEBHOOK_WORKER?.trim() !== "0",
    timeoutMs: wholeNumber(env, "BUR_WEBHOOK_TIMEOUT_MS", 5000, 1, 600_000, problems),
    maxAttempts: wholeNumber(env, "BUR_WEBHOOK_MAX_ATTEMPTS", 12, 1, 1000, problems),
    backoffMinMs,
    backoffMaxMs,
    concurrency: wholeNumber(env, "BUR_WEBHOOK_CONCURRENCY", 8, 1, 1000, problems),
    pollMs: wholeNumber(env, "BUR_WEBHOOK_POLL_MS", 1000, 10, 3_600_000, problems),
  });
}
