/**
 * Settings of the data plane's read-only Kubernetes watch (docs/operator.md, "Revocation
 * through watches"), read once with the other settings:
 *
 * - `WRIT_KUBE_WATCH`: `auto` (default) runs the watch when a kubeconfig is configured: the
 *   first file of `KUBECONFIG`, else the in-cluster service account when
 *   `KUBERNETES_SERVICE_HOST` is set (`~/.kube/config` alone never turns it on); `off` never.
 * - `WRIT_WATCH_NAMESPACES`: comma-separated namespaces to watch; empty: every namespace.
 * - `WRIT_WATCH_STALE_MS`: how long the watch may be down before verify fails closed
 *   (STEP_UP, REVOCATION_STATE_STALE) unless the controller's path vouches; 100 to 600000,
 *   default 5000.
 * - `WRIT_CONTROLLER_PATH`: `on` (default) trusts the controller's heartbeat in Postgres while
 *   the watch is down (./controller-path.ts); `off` fails closed on the watch alone.
 * - `WRIT_CONTROLLER_LEASE`: the Lease whose heartbeat to read (the chart sets it); unset: the
 *   most recently written one.
 * - `WRIT_API_OUTAGE_GRACE_MS`: while the API server is unreachable from this process AND the
 *   controller, how old the controller's last complete observation may be (0 to 3600000,
 *   default 120000; 0: an outage fails closed after WRIT_WATCH_STALE_MS).
 *
 * Anything unusable falls back to the default and adds a start-up problem; never throws.
 */
import { envInteger, envText, type Env } from "../../core/env/index.js";

/** Where the watch's kubeconfig comes from. */
export type KubeConfigSource = { readonly kind: "file"; readonly path: string } | { readonly kind: "in-cluster" };

/** The loaded watch settings. */
export interface KubeWatchSettings {
  /** WRIT_KUBE_WATCH. */
  readonly mode: "auto" | "off";
  /** The kubeconfig found, or null (then `auto` does not watch). */
  readonly kubeconfig: KubeConfigSource | null;
  /** WRIT_WATCH_NAMESPACES; empty: every namespace. */
  readonly namespaces: readonly string[];
  /** WRIT_WATCH_STALE_MS. */
  readonly staleMs: number;
  /** WRIT_CONTROLLER_PATH. */
  readonly controllerPath: boolean;
  /** WRIT_CONTROLLER_LEASE. */
  readonly controllerLease: string | undefined;
  /** WRIT_API_OUTAGE_GRACE_MS. */
  readonly outageGraceMs: number;
}

/** Default of WRIT_WATCH_STALE_MS. */
export const DEFAULT_WATCH_STALE_MS = 5000;
/** Default of WRIT_API_OUTAGE_GRACE_MS. */
export const DEFAULT_OUTAGE_GRACE_MS = 120_000;

/** A namespace name (RFC 1123 label). */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function kubeconfigOf(env: Env): KubeConfigSource | null {
  const list = envText(env, "KUBECONFIG");
  const first = list?.split(process.platform === "win32" ? ";" : ":").find((p) => p.trim() !== "");
  if (first) return { kind: "file", path: first.trim() };
  return envText(env, "KUBERNETES_SERVICE_HOST") ? { kind: "in-cluster" } : null;
}

/** Reads the watch settings from `env`; problems go to `problems`. */
export function loadKubeWatchSettings(env: Env, problems: string[]): KubeWatchSettings {
  const rawMode = envText(env, "WRIT_KUBE_WATCH")?.toLowerCase() ?? "auto";
  let mode: "auto" | "off" = "auto";
  if (rawMode === "off") mode = "off";
  else if (rawMode !== "auto") problems.push("WRIT_KUBE_WATCH must be auto or off; using auto");
  const staleMs = envInteger(env, "WRIT_WATCH_STALE_MS", { min: 100, max: 600_000, dflt: DEFAULT_WATCH_STALE_MS }, problems);
  const listed = (envText(env, "WRIT_WATCH_NAMESPACES") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const namespaces = listed.filter((n) => NAMESPACE_NAME.test(n));
  if (namespaces.length < listed.length) problems.push("WRIT_WATCH_NAMESPACES: names that are not Kubernetes namespace names were ignored");
  const rawPath = envText(env, "WRIT_CONTROLLER_PATH")?.toLowerCase() ?? "on";
  if (rawPath !== "on" && rawPath !== "off") problems.push("WRIT_CONTROLLER_PATH must be on or off; using on");
  const outageGraceMs = envInteger(env, "WRIT_API_OUTAGE_GRACE_MS", { min: 0, max: 3_600_000, dflt: DEFAULT_OUTAGE_GRACE_MS }, problems);
  return Object.freeze({
    mode,
    kubeconfig: kubeconfigOf(env),
    namespaces: Object.freeze(namespaces),
    staleMs,
    controllerPath: rawPath !== "off",
    controllerLease: envText(env, "WRIT_CONTROLLER_LEASE") ?? undefined,
    outageGraceMs,
  });
}

/** True when the watch runs: mode auto and a kubeconfig found. */
export function kubeWatchEnabled(s: KubeWatchSettings): boolean {
  return s.mode === "auto" && s.kubeconfig !== null;
}
