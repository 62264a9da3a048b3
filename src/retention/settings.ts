/**
 * Settings of retention (src/store/retention.ts, docs/retention.md), read with the others:
 *
 * - `WRIT_RETENTION_INTERVAL_MS`: how often a data-plane process prunes, 0..86400000, default
 *   600000 (10 minutes); 0 turns pruning off in that process.
 * - `WRIT_DECISION_RETENTION_DAYS`: days a verify decision is kept (the idempotency window of
 *   `POST /v1/verify`), and an approval after it was used, decided or expired; 1..36500,
 *   default 30.
 * - `WRIT_WEBHOOK_RETENTION_DAYS`: days a finished webhook delivery is kept, 1..36500, default 30.
 * - `WRIT_HOLD_EXPIRY_SECONDS`: a hold (an ALLOW) not captured, voided or failed within this many
 *   seconds is expired by the service: the rest of it is released, with an `expired` ledger entry
 *   (docs/verify.md, "Holds, captures and refunds"); 0..31536000, default 0 (holds never expire).
 * - `WRIT_HOLD_SWEEP_INTERVAL_MS`: how often a data-plane process looks for expired holds,
 *   1000..86400000, default 60000.
 *
 * Anything unusable falls back to the default and adds a start-up problem; never throws.
 */
import { envInteger, type Env } from "../core/env/index.js";

/** The loaded retention settings. */
export interface RetentionSettings {
  readonly intervalMs: number;
  readonly decisionDays: number;
  readonly webhookDays: number;
  /** Seconds a hold stays open before the service expires it; 0: never. */
  readonly holdExpirySeconds: number;
  readonly holdSweepIntervalMs: number;
}

/** Defaults. */
export const DEFAULT_RETENTION_INTERVAL_MS = 600_000;
export const DEFAULT_DECISION_RETENTION_DAYS = 30;
export const DEFAULT_WEBHOOK_RETENTION_DAYS = 30;
export const DEFAULT_HOLD_SWEEP_INTERVAL_MS = 60_000;

/** Reads the WRIT_*RETENTION* settings from `env`; problems go to `problems`. */
export function loadRetentionSettings(env: Env, problems: string[]): RetentionSettings {
  return Object.freeze({
    intervalMs: envInteger(env, "WRIT_RETENTION_INTERVAL_MS", { min: 0, max: 86_400_000, dflt: DEFAULT_RETENTION_INTERVAL_MS }, problems),
    decisionDays: envInteger(env, "WRIT_DECISION_RETENTION_DAYS", { min: 1, max: 36_500, dflt: DEFAULT_DECISION_RETENTION_DAYS }, problems),
    webhookDays: envInteger(env, "WRIT_WEBHOOK_RETENTION_DAYS", { min: 1, max: 36_500, dflt: DEFAULT_WEBHOOK_RETENTION_DAYS }, problems),
    holdExpirySeconds: envInteger(env, "WRIT_HOLD_EXPIRY_SECONDS", { min: 0, max: 31_536_000, dflt: 0 }, problems),
    holdSweepIntervalMs: envInteger(env, "WRIT_HOLD_SWEEP_INTERVAL_MS", { min: 1000, max: 86_400_000, dflt: DEFAULT_HOLD_SWEEP_INTERVAL_MS }, problems),
  });
}
