/**
 * Settings of the data plane, read from the environment exactly once.
 *
 * Promise: `loadSettings(env)` never throws for a setting an endpoint reads. A setting that is
 * set but does not load (a bad JWK, a bad seed, malformed JSON) is kept as `{status:"invalid",
 * error}` so the endpoints that need it can answer as the spec says (503 when unset, 500 on the
 * key list when a configured key fails to load). Only settings without which the process cannot
 * run at all (PORT) throw a `SettingsError`. The result is frozen.
 *
 * `SVC_PUBLISHED_KEYS` format: a JSON array of key records, each an object with a member
 * `public_key` holding a public JWK (Ed25519 or P-256, no private members) and optionally other
 * members (for example `domain`, `org`, `use`) that are published unchanged. The published
 * `public_key` holds only its public members plus `kid` (computed, `sha256:` RFC 7638
 * thumbprint hex); a `kid` given in the setting must equal the computed one.
 */
import { isIP } from "node:net";
import { keyId, parsePublicJwk, signerFromSeed, type PublicJwk, type Signer } from "../core/jose/index.js";
import { DEFAULT_REPORT_DAILY_CAP } from "../core/registry/index.js";
import { isCheckpointOrigin } from "../core/tlog/index.js";
import { loadWebhookSettings, type WebhookSettings } from "../webhooks/index.js";
import { loadRetentionSettings, type RetentionSettings } from "../retention/index.js";
import { loadPortalSettings, type PortalSettings } from "./routes/portal/settings.js";
import { envInteger, envText, type Env } from "../core/env/index.js";
import { loadFxSettings, type FxSettings } from "../fx/index.js";
import { loadVerifySettings, type VerifySettings, loadKubeWatchSettings, type KubeWatchSettings } from "../verify/index.js";
import { loadOutboundPolicy, type OutboundPolicy } from "../http/index.js";
import { loadServerTimeouts, type ServerTimeouts } from "./server-timeouts.js";
import { parseClusterUrl, loadSynchronousCommit, type SynchronousCommit } from "../store/index.js";

/** A setting that may be absent, loaded, or present but unusable. */
export type Loaded<T> =
  { readonly status: "unset" } | { readonly status: "loaded"; readonly value: T } | { readonly status: "invalid"; readonly error: string };

/** One published key record: the public JWK with its computed kid, plus any extra members. */
export interface PublishedKeyRecord {
  readonly public_key: PublicJwk & { kid: string };
  readonly [member: string]: unknown;
}

/** Pino log levels accepted in LOG_LEVEL. */
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** The typed, frozen settings of one process. */
export interface Settings {
  /** PORT, default 8080. */
  readonly port: number;
  /** HOST, default 127.0.0.1. */
  readonly host: string;
  /**
   * METRICS_PORT: serve `/metrics` on this port (METRICS_HOST, default HOST) instead of the public
   * port, which then answers 404 for it; null (unset): on the public port (local use; the chart
   * sets 9090).
   */
  readonly metricsPort: number | null;
  /** METRICS_HOST, default HOST. */
  readonly metricsHost: string;
  /**
   * WRIT_TRUST_PROXY: which proxies' X-Forwarded-For decides a request's client address
   * (Fastify's `trustProxy`): false when unset, a hop count, or a list of addresses/CIDRs.
   */
  readonly trustProxy: false | number | string;
  /**
   * DATABASE_URL, or null when unset: one host, or several (`host1:5432,host2:5432`) with
   * `target_session_attrs` for a replicated Postgres (src/store/cluster.ts).
   */
  readonly databaseUrl: string | null;
  /**
   * DATABASE_READ_URL, or null when unset: where the read routes a standby can answer (log
   * entries, tree heads and proofs, the revocation list) read; unset, they read DATABASE_URL.
   */
  readonly databaseReadUrl: string | null;
  /** WRIT_SYNCHRONOUS_COMMIT: `synchronous_commit` of every data-plane write session, or null (the server's setting). */
  readonly synchronousCommit: SynchronousCommit | null;
  /** SVC_PUSH_NOTIFIER_JWK: the notifier's public key for the revocation push webhook. */
  readonly pushNotifierJwk: Loaded<PublicJwk>;
  /** SVC_LOG_SIGNING_SEED: the log signing key (Ed25519 from a 32-byte seed). */
  readonly logSigner: Loaded<Signer>;
  /** SVC_APPEND_TOKEN: bearer value accepted by log append, or null. */
  readonly appendToken: string | null;
  /** SVC_PUBLISHED_KEYS: extra key records published in the key list. */
  readonly publishedKeys: Loaded<readonly PublishedKeyRecord[]>;
  /** BUR_ADMIN_TOKEN: admin bearer token, or null. */
  readonly adminToken: string | null;
  /** BUR_ALLOW_DEMO_SEED equals "1". */
  readonly allowDemoSeed: boolean;
  /** BUR_DEV_MAILBOX equals "1". */
  readonly devMailbox: boolean;
  /** BUR_REPORT_DAILY_CAP: reports one organization may file per UTC day, default 1000. */
  readonly reportDailyCap: number;
  /** BUR_MAX_SUBSCRIPTIONS_PER_ORG: active subscriptions one organization may hold, default 100. */
  readonly subscriptionCap: number;
  /** WRIT_OUTBOUND_ALLOW_LOOPBACK, WRIT_OUTBOUND_ALLOW: where outbound requests may go (src/http/outbound-settings.ts). */
  readonly outbound: OutboundPolicy;
  /** WRIT_HTTP_*_TIMEOUT_MS: how long a client may take (src/api/server-timeouts.ts). */
  readonly serverTimeouts: ServerTimeouts;
  /** BUR_WEBHOOK_*: webhook delivery (see src/webhooks/settings.ts, docs/webhooks.md). */
  readonly webhooks: WebhookSettings;
  /** WRIT_RETENTION_INTERVAL_MS, WRIT_DECISION_RETENTION_DAYS, WRIT_WEBHOOK_RETENTION_DAYS (src/retention/settings.ts, docs/retention.md). */
  readonly retention: RetentionSettings;
  /** BUR_PORTAL_URL, BUR_SMTP_URL, ...: portal sign-in (see src/api/routes/portal/settings.ts). */
  readonly portal: PortalSettings;
  /** SVC_FX_SOURCE_URL, SVC_FX_TIMEOUT_MS: the rate source (see src/fx/settings.ts, docs/fx.md). */
  readonly fx: FxSettings;
  /** WRIT_ACK_DOMAIN_*: how acknowledgement domains' key lists are fetched (src/verify/settings.ts, docs/verify.md). */
  readonly verify: VerifySettings;
  /** WRIT_KUBE_WATCH, WRIT_WATCH_NAMESPACES, WRIT_WATCH_STALE_MS (+ KUBECONFIG / in-cluster): the revocation watch (src/verify/revocation/kube-watch-settings.ts, docs/operator.md). */
  readonly kubeWatch: KubeWatchSettings;
  /** WRIT_MANDATE_AUDIENCE, WRIT_MANDATE_KB_MAX_AGE_SECONDS: recording payment mandates (docs/mandates.md). */
  readonly mandates: MandateSettings;
  /** LOG_LEVEL, default info. */
  readonly logLevel: LogLevel;
  /** WRIT_LOG_FILE: where the JSON log lines go instead of standard output (appended); null: standard output. `writ dev` sets `.writ/writ.log`. */
  readonly logFile: string | null;
  /** WRIT_LOG_ORIGIN: the checkpoint origin of the transparency log, default `writ.local/log`. */
  readonly logOrigin: string;
  /** `logOrigin` when it can be a checkpoint origin (a note key name), else null: what the log signs with. */
  readonly checkpointOrigin: string | null;
  /** Human-readable problems found while loading (no secret values), for the start-up log. */
  readonly problems: readonly string[];
}

/** How `POST /v1/mandates` checks a mandate's key binding. */
export interface MandateSettings {
  /** The `aud` a key-binding JWT must name when the request names none (default `writ`). */
  readonly audience: string;
  /** Oldest accepted key-binding `iat`, ms (WRIT_MANDATE_KB_MAX_AGE_SECONDS, default 300). */
  readonly kbMaxAgeMs: number;
}

/** Default audience of mandate presentations. */
export const DEFAULT_MANDATE_AUDIENCE = "writ";

/** Thrown only for settings without which the process cannot run (PORT, HOST). */
export class SettingsError extends Error {
  override readonly name = "SettingsError";
  constructor(
    readonly code: "PORT_INVALID" | "HOST_INVALID" | "DATABASE_URL_INVALID",
    message: string,
  ) {
    super(message);
  }
}

/** Default of BUR_MAX_SUBSCRIPTIONS_PER_ORG. */
export const DEFAULT_SUBSCRIPTION_CAP = 100;

/** Default checkpoint origin of the transparency log. */
export const DEFAULT_LOG_ORIGIN = "writ.local/log";

const text = envText;

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function loadJson<T>(raw: string | null, name: string, parse: (v: unknown) => T): Loaded<T> {
  if (raw === null) return { status: "unset" };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { status: "invalid", error: `${name} is not valid JSON` };
  }
  try {
    return { status: "loaded", value: parse(json) };
  } catch (e) {
    return { status: "invalid", error: `${name}: ${describe(e)}` };
  }
}

/** Parses SVC_PUBLISHED_KEYS' JSON value (see the module comment). Throws on any bad record. */
export function parsePublishedKeys(json: unknown): readonly PublishedKeyRecord[] {
  if (!Array.isArray(json)) throw new TypeError("must be a JSON array of key records");
  return Object.freeze(
    json.map((rec: unknown, i) => {
      if (typeof rec !== "object" || rec === null || Array.isArray(rec)) {
        throw new TypeError(`record ${i} must be an object`);
      }
      const { public_key, ...rest } = rec as Record<string, unknown>;
      const jwk = parsePublicJwk(public_key);
      const kid = keyId(jwk);
      const given = (public_key as Record<string, unknown>).kid;
      if (given !== undefined && given !== kid) throw new TypeError(`record ${i}: kid does not match the key`);
      return Object.freeze({ ...rest, public_key: Object.freeze({ ...jwk, kid }) });
    }),
  );
}

const PROXY_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** WRIT_TRUST_PROXY: unset false; `1`..`10` hops; or comma-separated addresses, CIDRs and proxy-addr names. */
export function loadTrustProxy(raw: string | null, problems: string[]): false | number | string {
  if (raw === null) return false;
  if (/^\d{1,2}$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 10) return Number(raw);
  const items = raw.split(",").map((x) => x.trim());
  const ok = items.every((item) => {
    if (PROXY_NAMES.has(item)) return true;
    const [addr, bits, ...rest] = item.split("/");
    const family = isIP(addr ?? "");
    if (family === 0 || rest.length > 0) return false;
    return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
  });
  if (ok) return items.join(",");
  problems.push(
    "WRIT_TRUST_PROXY must be a hop count 1..10 or a comma-separated list of proxy addresses, CIDRs, loopback, linklocal or uniquelocal; trusting no proxy",
  );
  return false;
}

function loadPort(raw: string | null, name = "PORT"): number {
  if (raw === null) return 8080;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new SettingsError("PORT_INVALID", `${name} must be an integer from 0 to 65535`);
  }
  return Number(raw);
}

/** A database URL setting: unset, or one node-postgres or the cluster resolver reads (else the process cannot run). */
function loadDatabaseUrl(env: Env, name: "DATABASE_URL" | "DATABASE_READ_URL"): string | null {
  const url = text(env, name);
  if (url === null) return null;
  try {
    parseClusterUrl(url);
  } catch (e) {
    throw new SettingsError("DATABASE_URL_INVALID", `${name}: ${describe(e)}`);
  }
  return url;
}

/** Reads every setting from `env` (default `process.env`) once. */
export function loadSettings(env: Env = process.env): Settings {
  const logOrigin = text(env, "WRIT_LOG_ORIGIN") ?? DEFAULT_LOG_ORIGIN;
  const problems: string[] = [];
  const host = text(env, "HOST") ?? "127.0.0.1";
  if (/\s/.test(host)) throw new SettingsError("HOST_INVALID", "HOST must be a host name or address");

  const pushNotifierJwk = loadJson(text(env, "SVC_PUSH_NOTIFIER_JWK"), "SVC_PUSH_NOTIFIER_JWK", parsePublicJwk);
  const seed = text(env, "SVC_LOG_SIGNING_SEED");
  let logSigner: Loaded<Signer> = { status: "unset" };
  if (seed !== null) {
    try {
      logSigner = { status: "loaded", value: signerFromSeed(seed) };
    } catch (e) {
      logSigner = { status: "invalid", error: `SVC_LOG_SIGNING_SEED: ${describe(e)}` };
    }
  }
  const publishedKeys = loadJson(text(env, "SVC_PUBLISHED_KEYS"), "SVC_PUBLISHED_KEYS", parsePublishedKeys);
  for (const s of [pushNotifierJwk, logSigner, publishedKeys]) if (s.status === "invalid") problems.push(s.error);

  const rawLevel = text(env, "LOG_LEVEL")?.toLowerCase() ?? "info";
  let logLevel: LogLevel = "info";
  if ((LOG_LEVELS as readonly string[]).includes(rawLevel)) logLevel = rawLevel as LogLevel;
  else problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}; using info`);

  return Object.freeze({
    port: loadPort(text(env, "PORT")),
    host,
    metricsPort: text(env, "METRICS_PORT") === null ? null : loadPort(text(env, "METRICS_PORT"), "METRICS_PORT"),
    metricsHost: text(env, "METRICS_HOST") ?? host,
    logFile: text(env, "WRIT_LOG_FILE"),
    trustProxy: loadTrustProxy(text(env, "WRIT_TRUST_PROXY"), problems),
    databaseUrl: loadDatabaseUrl(env, "DATABASE_URL"),
    databaseReadUrl: loadDatabaseUrl(env, "DATABASE_READ_URL"),
    synchronousCommit: loadSynchronousCommit(env, problems),
    pushNotifierJwk: Object.freeze(pushNotifierJwk),
    logSigner: Object.freeze(logSigner),
    appendToken: text(env, "SVC_APPEND_TOKEN"),
    publishedKeys: Object.freeze(publishedKeys),
    adminToken: text(env, "BUR_ADMIN_TOKEN"),
    allowDemoSeed: text(env, "BUR_ALLOW_DEMO_SEED") === "1",
    devMailbox: text(env, "BUR_DEV_MAILBOX") === "1",
    reportDailyCap: envInteger(env, "BUR_REPORT_DAILY_CAP", { min: 1, max: 1_000_000_000, dflt: DEFAULT_REPORT_DAILY_CAP }, problems),
    subscriptionCap: envInteger(env, "BUR_MAX_SUBSCRIPTIONS_PER_ORG", { min: 1, max: 1_000_000, dflt: DEFAULT_SUBSCRIPTION_CAP }, problems),
    outbound: loadOutboundPolicy(env, problems),
    serverTimeouts: loadServerTimeouts(env, problems),
    webhooks: loadWebhookSettings(env, problems),
    retention: loadRetentionSettings(env, problems),
    portal: loadPortalSettings(env, problems),
    fx: loadFxSettings(env, problems),
    verify: loadVerifySettings(env, problems),
    kubeWatch: loadKubeWatchSettings(env, problems),
    mandates: Object.freeze({
      audience: text(env, "WRIT_MANDATE_AUDIENCE") ?? DEFAULT_MANDATE_AUDIENCE,
      kbMaxAgeMs: envInteger(env, "WRIT_MANDATE_KB_MAX_AGE_SECONDS", { min: 1, max: 86_400, dflt: 300 }, problems) * 1000,
    }),
    logLevel,
    logOrigin,
    checkpointOrigin: isCheckpointOrigin(logOrigin) ? logOrigin : null,
    problems: Object.freeze(problems),
  });
}

/** The loaded value of a setting, or null when it is unset or invalid. */
export function loadedOrNull<T>(s: Loaded<T>): T | null {
  return s.status === "loaded" ? s.value : null;
}
