/**
 * Settings of the verify path, read once with the other settings (docs/verify.md):
 *
 * - `WRIT_ACK_DOMAIN_SCHEME`: how an acknowledgement's `domain` key list is fetched, `https`
 *   (default) or `http` (tests and local setups only).
 * - `WRIT_ACK_DOMAIN_PORT`: a port appended to the domain (1..65535); unset: the scheme's own.
 * - `WRIT_ACK_DOMAIN_TIMEOUT_MS`: how long one key-list request may take, 1..60000, default 2000.
 * - `WRIT_CACHE_TTL_MS`: how long the data plane serves what it keeps in memory between change
 *   notices (agents' verify snapshots, API key credentials; ./caches/followed-cache.ts), 0..3600000,
 *   default 60000; 0 reads Postgres on every request.
 * - `WRIT_CACHE_MAX_AGENTS`: how many agents' verify snapshots are kept (least recently used
 *   dropped first), 1..10000000, default 10000; the prepared-record cache holds two records per
 *   agent (an agreement and its delegation). About 8 KB of memory per agent kept.
 * - `WRIT_DENIED_ATTEMPT_BURST`: how many counted DENYs of one agent inside the burst window
 *   make the service revoke its delegation (DENIED_ATTEMPT_BURST), 0..1000, default 5; 0 turns
 *   the rule off. Which DENYs count: `countsAsAttempt` (src/core/evaluate/reasons.ts).
 * - `WRIT_DENIED_ATTEMPT_WINDOW_SECONDS`: the burst window, 1..86400, default 60.
 * - `WRIT_SPEND_BATCH_MAX`: most ALLOWs that share one spend transaction (group commit,
 *   ./pipeline/spend-writer.ts), 1..1000, default 64; 1 gives every ALLOW its own.
 * - `WRIT_SPEND_BATCH_WAIT_MS`: how long the first ALLOW of a batch waits for others to join
 *   it, 0..100 ms, default 1.
 * - `WRIT_SPEND_BATCHES_IN_FLIGHT`: most spend transactions of the process at once, 1..64,
 *   default 2 (each holds a pool connection while it runs; on a Citus cluster, one per worker instead).
 * - `WRIT_PERIOD_HOUR_COUNTERS_FROM`: from how many payments in a rolling window (the new one
 *   included) its owner's spends are also counted in their UTC hour's counter, so that reading
 *   the window costs the same however many it holds (src/store/ledger/periods.ts), 1..1000000,
 *   default 16; 1 counts every one.
 * - `WRIT_PROPOSED_AT_SKEW_SECONDS`: how far a verify's `action.proposed_at` may be from the
 *   service clock, either way, 1..86400, default 300; farther is a 400
 *   (`VERIFY_PROPOSED_AT_SKEW`). Rates are always those of the decision's own UTC day.
 *
 * Anything unusable falls back to the default and adds a start-up problem; never throws.
 */
import { envInteger, envText, type Env } from "../core/env/index.js";
import { DEFAULT_POLICY } from "../core/evaluate/index.js";
import { HOUR_COUNTERS_FROM } from "../store/index.js";
import { DEFAULT_SPEND_BATCHES_IN_FLIGHT, DEFAULT_SPEND_BATCH_MAX, DEFAULT_SPEND_BATCH_WAIT_MS } from "./commit/queues.js";

/** The loaded verify settings. */
export interface VerifySettings {
  readonly ackDomainScheme: "https" | "http";
  /** Port for key-list requests, or null for the scheme's default. */
  readonly ackDomainPort: number | null;
  readonly ackDomainTimeoutMs: number;
  /** WRIT_CACHE_TTL_MS. */
  readonly cacheTtlMs: number;
  /** WRIT_CACHE_MAX_AGENTS. */
  readonly cacheMaxAgents: number;
  /** WRIT_DENIED_ATTEMPT_BURST (0: off). */
  readonly deniedAttemptBurst: number;
  /** WRIT_DENIED_ATTEMPT_WINDOW_SECONDS. */
  readonly deniedAttemptWindowSeconds: number;
  /** WRIT_SPEND_BATCH_MAX. */
  readonly spendBatchMax: number;
  /** WRIT_SPEND_BATCH_WAIT_MS. */
  readonly spendBatchWaitMs: number;
  /** WRIT_SPEND_BATCHES_IN_FLIGHT. */
  readonly spendBatchesInFlight: number;
  /** WRIT_PROPOSED_AT_SKEW_SECONDS. */
  readonly proposedAtSkewSeconds: number;
  /** WRIT_PERIOD_HOUR_COUNTERS_FROM. */
  readonly periodHourCountersFrom: number;
}

/** Default of WRIT_CACHE_TTL_MS. */
export const DEFAULT_CACHE_TTL_MS = 60_000;

/** Default of WRIT_CACHE_MAX_AGENTS. */
export const DEFAULT_CACHE_MAX_AGENTS = 10_000;

/** Default of WRIT_DENIED_ATTEMPT_BURST (the engine's default policy). */
export const DEFAULT_DENIED_ATTEMPT_BURST = DEFAULT_POLICY.denialBurstCount;

/** Default of WRIT_DENIED_ATTEMPT_WINDOW_SECONDS. */
export const DEFAULT_DENIED_ATTEMPT_WINDOW_SECONDS = 60;

/** Default of WRIT_PROPOSED_AT_SKEW_SECONDS. */
export const DEFAULT_PROPOSED_AT_SKEW_SECONDS = 300;

/** Default of WRIT_ACK_DOMAIN_TIMEOUT_MS. */
export const DEFAULT_ACK_DOMAIN_TIMEOUT_MS = 2000;

function scheme(raw: string | null, problems: string[]): "https" | "http" {
  if (raw === null) return "https";
  const v = raw.toLowerCase();
  if (v === "https" || v === "http") return v;
  problems.push("WRIT_ACK_DOMAIN_SCHEME must be https or http; using https");
  return "https";
}

function port(raw: string | null, problems: string[]): number | null {
  if (raw === null) return null;
  if (/^\d{1,5}$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 65535) return Number(raw);
  problems.push("WRIT_ACK_DOMAIN_PORT must be a port from 1 to 65535; using the scheme's default");
  return null;
}

/** Reads the WRIT_ACK_DOMAIN_*, WRIT_CACHE_*, WRIT_DENIED_ATTEMPT_*, WRIT_SPEND_BATCH_*, WRIT_PERIOD_HOUR_COUNTERS_FROM and WRIT_PROPOSED_AT_SKEW_SECONDS settings from `env`; problems go to `problems`. */
export function loadVerifySettings(env: Env, problems: string[]): VerifySettings {
  return Object.freeze({
    ackDomainScheme: scheme(envText(env, "WRIT_ACK_DOMAIN_SCHEME"), problems),
    ackDomainPort: port(envText(env, "WRIT_ACK_DOMAIN_PORT"), problems),
    ackDomainTimeoutMs: envInteger(env, "WRIT_ACK_DOMAIN_TIMEOUT_MS", { min: 1, max: 60_000, dflt: DEFAULT_ACK_DOMAIN_TIMEOUT_MS }, problems),
    cacheTtlMs: envInteger(env, "WRIT_CACHE_TTL_MS", { min: 0, max: 3_600_000, dflt: DEFAULT_CACHE_TTL_MS }, problems),
    cacheMaxAgents: envInteger(env, "WRIT_CACHE_MAX_AGENTS", { min: 1, max: 10_000_000, dflt: DEFAULT_CACHE_MAX_AGENTS }, problems),
    deniedAttemptBurst: envInteger(env, "WRIT_DENIED_ATTEMPT_BURST", { min: 0, max: 1000, dflt: DEFAULT_DENIED_ATTEMPT_BURST }, problems),
    deniedAttemptWindowSeconds: envInteger(
      env,
      "WRIT_DENIED_ATTEMPT_WINDOW_SECONDS",
      { min: 1, max: 86_400, dflt: DEFAULT_DENIED_ATTEMPT_WINDOW_SECONDS },
      problems,
    ),
    spendBatchMax: envInteger(env, "WRIT_SPEND_BATCH_MAX", { min: 1, max: 1000, dflt: DEFAULT_SPEND_BATCH_MAX }, problems),
    spendBatchWaitMs: envInteger(env, "WRIT_SPEND_BATCH_WAIT_MS", { min: 0, max: 100, dflt: DEFAULT_SPEND_BATCH_WAIT_MS }, problems),
    spendBatchesInFlight: envInteger(env, "WRIT_SPEND_BATCHES_IN_FLIGHT", { min: 1, max: 64, dflt: DEFAULT_SPEND_BATCHES_IN_FLIGHT }, problems),
    proposedAtSkewSeconds: envInteger(env, "WRIT_PROPOSED_AT_SKEW_SECONDS", { min: 1, max: 86_400, dflt: DEFAULT_PROPOSED_AT_SKEW_SECONDS }, problems),
    periodHourCountersFrom: envInteger(env, "WRIT_PERIOD_HOUR_COUNTERS_FROM", { min: 1, max: 1_000_000, dflt: HOUR_COUNTERS_FROM }, problems),
  });
}
