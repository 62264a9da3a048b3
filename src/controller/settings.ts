/**
 * Settings of `writ controller`, read once from the environment. The Helm chart sets HOST, PORT,
 * POD_NAME, POD_NAMESPACE, WRIT_WATCH_NAMESPACES, WRIT_LEADER_ELECTION_LEASE and
 * WRIT_LEADER_ELECTION_NAMESPACE; the kubeconfig comes from KUBECONFIG (or ~/.kube/config, or the
 * in-cluster service account). A setting without which the controller cannot work throws a
 * `ControllerSettingsError` naming it; a malformed optional one falls back to its default and is
 * listed in `problems`.
 */
import { envInteger, type Env } from "../core/env/index.js";
import { signerFromSeed, type Signer } from "../core/jose/index.js";
import { DEFAULT_RATE_LIMITS, type RateLimitSettings } from "./queue/rate-limiter.js";
import { LOG_LEVELS, type LogLevel } from "./log.js";
import { loadSynchronousCommit, type SynchronousCommit } from "../store/index.js";

/** Everything `writ controller` is configured with. */
export interface ControllerSettings {
  /** DATABASE_URL (required). */
  databaseUrl: string;
  /**
   * WRIT_SYNCHRONOUS_COMMIT: `synchronous_commit` of the controller's sessions, as the data
   * plane's (a revocation by deletion is then on the synchronous standby before its status says
   * so); null: the server's setting.
   */
  synchronousCommit: SynchronousCommit | null;
  /** SVC_LOG_SIGNING_SEED: signs transparency log heads; unset: agreements are stored but not logged. */
  logSigner: Signer | undefined;
  /** WRIT_LOG_ORIGIN: checkpoint origin of log heads (default writ.local/log). */
  logOrigin: string;
  /** WRIT_MANDATE_AUDIENCE (default `writ`), WRIT_MANDATE_KB_MAX_AGE_SECONDS (default 300): declared payment mandates (docs/mandates.md). */
  mandates: { audience: string; kbMaxAgeMs: number };
  /** HOST of the health/metrics server (default 127.0.0.1; the chart sets 0.0.0.0). */
  host: string;
  /** PORT of the health/metrics server (default 8081). */
  port: number;
  /** WRIT_WEBHOOK_PORT: port of the admission webhook server (HTTPS on HOST); undefined: no webhook server. */
  webhookPort: number | undefined;
  /** WRIT_WEBHOOK_CERT_DIR: folder holding tls.crt and tls.key (default /tmp/k8s-webhook-server/serving-certs). */
  webhookCertDir: string;
  /** WRIT_WATCH_NAMESPACES: comma-separated; empty: every namespace. */
  watchNamespaces: string[];
  /** WRIT_LEADER_ELECTION_LEASE: the Lease name; unset: no leader election (one replica). */
  leaseName: string | undefined;
  /** WRIT_LEADER_ELECTION_NAMESPACE (default POD_NAMESPACE, else "default"). */
  leaseNamespace: string;
  /**
   * WRIT_LEADER_ELECTION_LEASE_DURATION / _RENEW_DEADLINE / _RETRY_PERIOD, in seconds
   * (controller-runtime's 15 / 10 / 2); the lease must outlast the renew deadline, which must
   * outlast 1.2 retry periods (client-go's rule), else the settings are refused.
   */
  leaderElection: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  /** POD_NAME: the base of this replica's identity (default the host name). */
  podName: string | undefined;
  /** WRIT_CONTROLLER_WORKERS: workers per kind (default 16, 1 to 64). */
  workers: number;
  /** WRIT_CONTROLLER_RESYNC_SECONDS: informer resync period (default 600; 0: never). */
  resyncMs: number;
  /** WRIT_WATCH_SILENCE_SECONDS: restart a watch silent this long (default 150). */
  silenceMs: number;
  /** WRIT_HEARTBEAT_INTERVAL_MS: how often the leader writes its heartbeat to Postgres (default 1000). */
  heartbeatIntervalMs: number;
  /** WRIT_CONTROLLER_QPS / WRIT_CONTROLLER_BURST: the retry token bucket (default 10 / 100). */
  rateLimits: RateLimitSettings;
  /** LOG_LEVEL (default info). */
  logLevel: LogLevel;
  problems: string[];
}

/**
 * Workers per kind: a reconcile mostly waits (API server, Postgres), and 16 keep up with a burst
 * of creates where 4 fell behind (docs/operator.md, bench:reconcile).
 */
export const DEFAULT_WORKERS = 16;

/** A required setting is missing or unusable. */
export class ControllerSettingsError extends Error {
  override readonly name = "ControllerSettingsError";
  constructor(
    readonly code: "DATABASE_URL_UNSET" | "PORT_INVALID" | "SEED_INVALID" | "LEADER_ELECTION_INVALID",
    message: string,
  ) {
    super(message);
  }
}

function text(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

/** Reads the settings from `env` (default `process.env`). */
export function loadControllerSettings(env: Env = process.env): ControllerSettings {
  const problems: string[] = [];
  const databaseUrl = text(env, "DATABASE_URL");
  if (!databaseUrl) throw new ControllerSettingsError("DATABASE_URL_UNSET", "DATABASE_URL is not set: the controller stores what it reconciles in Postgres");
  const portText = text(env, "PORT") ?? "8081";
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw new ControllerSettingsError("PORT_INVALID", "PORT must be an integer from 0 to 65535");
  const webhookText = text(env, "WRIT_WEBHOOK_PORT");
  if (webhookText !== undefined && (!/^\d{1,5}$/.test(webhookText) || Number(webhookText) > 65535)) {
    throw new ControllerSettingsError("PORT_INVALID", "WRIT_WEBHOOK_PORT must be an integer from 0 to 65535");
  }
  const seed = text(env, "SVC_LOG_SIGNING_SEED");
  let logSigner: Signer | undefined;
  if (seed !== undefined) {
    try {
      logSigner = signerFromSeed(seed);
    } catch (e) {
      throw new ControllerSettingsError("SEED_INVALID", `SVC_LOG_SIGNING_SEED: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const level = (text(env, "LOG_LEVEL") ?? "info").toLowerCase();
  const logLevel = (LOG_LEVELS as readonly string[]).includes(level) ? (level as LogLevel) : "info";
  if (logLevel !== level) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}; using info`);
  const podNamespace = text(env, "POD_NAMESPACE");
  const lease = envInteger(env, "WRIT_LEADER_ELECTION_LEASE_DURATION", { min: 2, max: 600, dflt: 15 }, problems);
  const renew = envInteger(env, "WRIT_LEADER_ELECTION_RENEW_DEADLINE", { min: 1, max: 600, dflt: 10 }, problems);
  const retry = envInteger(env, "WRIT_LEADER_ELECTION_RETRY_PERIOD", { min: 1, max: 600, dflt: 2 }, problems);
  if (!(lease > renew && renew > 1.2 * retry)) {
    throw new ControllerSettingsError(
      "LEADER_ELECTION_INVALID",
      `leader election: the lease duration (${lease} s) must be longer than the renew deadline (${renew} s), which must be longer than 1.2 retry periods (${retry} s)`,
    );
  }
  return {
    databaseUrl,
    synchronousCommit: loadSynchronousCommit(env, problems),
    logSigner,
    logOrigin: text(env, "WRIT_LOG_ORIGIN") ?? "writ.local/log",
    mandates: {
      audience: text(env, "WRIT_MANDATE_AUDIENCE") ?? "writ",
      kbMaxAgeMs: envInteger(env, "WRIT_MANDATE_KB_MAX_AGE_SECONDS", { min: 1, max: 86_400, dflt: 300 }, problems) * 1000,
    },
    host: text(env, "HOST") ?? "127.0.0.1",
    port: Number(portText),
    webhookPort: webhookText === undefined ? undefined : Number(webhookText),
    webhookCertDir: text(env, "WRIT_WEBHOOK_CERT_DIR") ?? "/tmp/k8s-webhook-server/serving-certs",
    watchNamespaces: (text(env, "WRIT_WATCH_NAMESPACES") ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
    leaseName: text(env, "WRIT_LEADER_ELECTION_LEASE"),
    leaseNamespace: text(env, "WRIT_LEADER_ELECTION_NAMESPACE") ?? podNamespace ?? "default",
    podName: text(env, "POD_NAME"),
    leaderElection: { leaseDurationMs: lease * 1000, renewDeadlineMs: renew * 1000, retryPeriodMs: retry * 1000 },
    workers: envInteger(env, "WRIT_CONTROLLER_WORKERS", { min: 1, max: 64, dflt: DEFAULT_WORKERS }, problems),
    resyncMs: envInteger(env, "WRIT_CONTROLLER_RESYNC_SECONDS", { min: 0, max: 86_400, dflt: 600 }, problems) * 1000,
    silenceMs: envInteger(env, "WRIT_WATCH_SILENCE_SECONDS", { min: 5, max: 3600, dflt: 150 }, problems) * 1000,
    heartbeatIntervalMs: envInteger(env, "WRIT_HEARTBEAT_INTERVAL_MS", { min: 100, max: 10_000, dflt: 1000 }, problems),
    rateLimits: {
      ...DEFAULT_RATE_LIMITS,
      qps: envInteger(env, "WRIT_CONTROLLER_QPS", { min: 1, max: 10_000, dflt: DEFAULT_RATE_LIMITS.qps }, problems),
      burst: envInteger(env, "WRIT_CONTROLLER_BURST", { min: 1, max: 100_000, dflt: DEFAULT_RATE_LIMITS.burst }, problems),
    },
    logLevel,
    problems,
  };
}
