/**
 * Settings of the verify path, read once with the other settings (docs/verify.md):
 *
 * - `WRIT_ACK_DOMAIN_SCHEME`: how an acknowledgement's `domain` key list is fetched, `https`
 *   (default) or `http` (tests and local setups only).
 * - `WRIT_ACK_DOMAIN_PORT`: a port appended to the domain (1..65535); unset: the scheme's own.
 * - `WRIT_ACK_DOMAIN_TIMEOUT_MS`: how long one key-list request may take, 1..60000, default 2000.
 * - `WRIT_CACHE_TTL_MS`: how long the data plane serves what it keeps in memory between change
 *   notices (agents' verify snapshots, API key credentials; ./followed-cache.ts), 0..3600000,
 *   default 60000; 0 reads Postgres on every request.
 * - `WRIT_CACHE_MAX_AGENTS`: how many agents' verify snapshots are kept (least recently used
 *   dropped first), 1..10000000, default 10000; the prepared-record cache holds two records per
 *   agent (an agreement and its delegation). About 8 KB of memory per agent kept.
 *
 * Anything unusable falls back to the default and adds a start-up problem; never throws.
 */

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
}

/** Default of WRIT_CACHE_TTL_MS. */
export const DEFAULT_CACHE_TTL_MS = 60_000;

/** Default of WRIT_CACHE_MAX_AGENTS. */
export const DEFAULT_CACHE_MAX_AGENTS = 10_000;

/** Default of WRIT_ACK_DOMAIN_TIMEOUT_MS. */
export const DEFAULT_ACK_DOMAIN_TIMEOUT_MS = 2000;

type Env = Readonly<Record<string, string | undefined>>;

function trimmed(env: Env, name: string): string | null {
  const v = env[name]?.trim();
  return v === undefined || v === "" ? null : v;
}

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

function timeout(raw: string | null, problems: string[]): number {
  if (raw === null) return DEFAULT_ACK_DOMAIN_TIMEOUT_MS;
  if (/^\d{1,5}$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 60_000) return Number(raw);
  problems.push(`WRIT_ACK_DOMAIN_TIMEOUT_MS must be an integer from 1 to 60000; using ${DEFAULT_ACK_DOMAIN_TIMEOUT_MS}`);
  return DEFAULT_ACK_DOMAIN_TIMEOUT_MS;
}

function cacheTtl(raw: string | null, problems: string[]): number {
  if (raw === null) return DEFAULT_CACHE_TTL_MS;
  if (/^\d{1,7}$/.test(raw) && Number(raw) <= 3_600_000) return Number(raw);
  problems.push(`WRIT_CACHE_TTL_MS must be an integer from 0 to 3600000; using ${DEFAULT_CACHE_TTL_MS}`);
  return DEFAULT_CACHE_TTL_MS;
}

function cacheMaxAgents(raw: string | null, problems: string[]): number {
  if (raw === null) return DEFAULT_CACHE_MAX_AGENTS;
  if (/^\d{1,8}$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 10_000_000) return Number(raw);
  problems.push(`WRIT_CACHE_MAX_AGENTS must be an integer from 1 to 10000000; using ${DEFAULT_CACHE_MAX_AGENTS}`);
  return DEFAULT_CACHE_MAX_AGENTS;
}

/** Reads the WRIT_ACK_DOMAIN_* and WRIT_CACHE_* settings from `env`; problems go to `problems`. */
export function loadVerifySettings(env: Env, problems: string[]): VerifySettings {
  return Object.freeze({
    ackDomainScheme: scheme(trimmed(env, "WRIT_ACK_DOMAIN_SCHEME"), problems),
    ackDomainPort: port(trimmed(env, "WRIT_ACK_DOMAIN_PORT"), problems),
    ackDomainTimeoutMs: timeout(trimmed(env, "WRIT_ACK_DOMAIN_TIMEOUT_MS"), problems),
    cacheTtlMs: cacheTtl(trimmed(env, "WRIT_CACHE_TTL_MS"), problems),
    cacheMaxAgents: cacheMaxAgents(trimmed(env, "WRIT_CACHE_MAX_AGENTS"), problems),
  });
}
