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
 * | BUR_WEBHOOK_CONNECT_TIMEOUT_MS | 2000 | time limit of connecting (at most the above)        |
 * | BUR_WEBHOOK_MAX_ATTEMPTS    | 12      | attempts before a delivery is marked failed         |
 * | BUR_WEBHOOK_BACKOFF_MIN_MS  | 1000    | delay after the first failure (doubles per failure) |
 * | BUR_WEBHOOK_BACKOFF_MAX_MS  | 600000  | largest delay between attempts                      |
 * | BUR_WEBHOOK_CONCURRENCY     | 64      | requests in flight per process                      |
 * | BUR_WEBHOOK_DESTINATION_CONCURRENCY | 2 | requests in flight to one host[:port] of one org |
 * | BUR_WEBHOOK_HOST_CONCURRENCY | 4     | requests in flight to one host (all ports) of one org |
 * | BUR_WEBHOOK_ORG_CONCURRENCY | 8      | requests in flight for one subscribing organization |
 * | BUR_WEBHOOK_POLL_MS         | 1000    | outbox poll interval (new rows also wake it)        |
 */
import { envInteger, envIntegerWithin, type Env } from "../core/env/index.js";

/** The typed webhook settings. */
export interface WebhookSettings {
  readonly worker: boolean;
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly maxAttempts: number;
  readonly backoffMinMs: number;
  readonly backoffMaxMs: number;
  readonly concurrency: number;
  readonly destinationConcurrency: number;
  readonly hostConcurrency: number;
  readonly orgConcurrency: number;
  readonly pollMs: number;
}

/** Reads the BUR_WEBHOOK_* settings; problems are appended to `problems`. */
export function loadWebhookSettings(env: Env, problems: string[]): WebhookSettings {
  const backoffMinMs = envInteger(env, "BUR_WEBHOOK_BACKOFF_MIN_MS", { min: 1, max: 86_400_000, dflt: 1000 }, problems);
  const backoffMaxMs = envIntegerWithin(
    env,
    "BUR_WEBHOOK_BACKOFF_MAX_MS",
    { min: 1, max: 86_400_000, dflt: 600_000 },
    { atLeast: ["BUR_WEBHOOK_BACKOFF_MIN_MS", backoffMinMs] },
    problems,
  );
  return Object.freeze({
    worker: env.BUR_WEBHOOK_WORKER?.trim() !== "0",
    timeoutMs: envInteger(env, "BUR_WEBHOOK_TIMEOUT_MS", { min: 1, max: 600_000, dflt: 5000 }, problems),
    connectTimeoutMs: envInteger(env, "BUR_WEBHOOK_CONNECT_TIMEOUT_MS", { min: 1, max: 600_000, dflt: 2000 }, problems),
    maxAttempts: envInteger(env, "BUR_WEBHOOK_MAX_ATTEMPTS", { min: 1, max: 1000, dflt: 12 }, problems),
    backoffMinMs,
    backoffMaxMs,
    concurrency: envInteger(env, "BUR_WEBHOOK_CONCURRENCY", { min: 1, max: 1000, dflt: 64 }, problems),
    destinationConcurrency: envInteger(env, "BUR_WEBHOOK_DESTINATION_CONCURRENCY", { min: 1, max: 1000, dflt: 2 }, problems),
    hostConcurrency: envInteger(env, "BUR_WEBHOOK_HOST_CONCURRENCY", { min: 1, max: 1000, dflt: 4 }, problems),
    orgConcurrency: envInteger(env, "BUR_WEBHOOK_ORG_CONCURRENCY", { min: 1, max: 1000, dflt: 8 }, problems),
    pollMs: envInteger(env, "BUR_WEBHOOK_POLL_MS", { min: 10, max: 3_600_000, dflt: 1000 }, problems),
  });
}
