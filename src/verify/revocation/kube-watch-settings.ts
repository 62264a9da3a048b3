/**
 * Settings of the data plane's read-only Kubernetes watch (docs/operator.md, "Revocation
 * through watches"), read once with the other settings:
 *
 * - `WRIT_KUBE_WATCH`: `auto` (default) runs the watch when a kubeconfig is configured: the
 *   first file of `KUBECONFIG`, else the in-cluster service account when
 *   `KUBERNETES_SERVICE_HOST` is set (`~/.kube/config` alone never turns it on); `off` never.
 * - `WRIT_WATCH_NAMESPACES`: comma-separated namespaces to watch; empty: every namespace.
 * - `WRIT_WATCH_STALE_MS`: how long the watch may be down before verify fails closed
 *   (STEP_UP, REVOCATION_STATE_STALE); 100 to 600000, default 5000.
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
}

/** Default of WRIT_WATCH_STALE_MS. */
export const DEFAULT_WATCH_STALE_MS = 5000;

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
  const listed = (envText(env, "WRIT_WATCH_NAMESPACES") ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
  const namespaces = listed.filter((n) => NAMESPACE_NAME.test(n));
  if (namespaces.length < listed.length) problems.push("WRIT_WATCH_NAMESPACES: names that are not Kubernetes namespace names were ignored");
  return Object.freeze({ mode, kubeconfig: kubeconfigOf(env), namespaces: Object.freeze(namespaces), staleMs });
}

/** True when the watch runs: mode auto and a kubeconfig found. */
export function kubeWatchEnabled(s: KubeWatchSettings): boolean {
  return s.mode === "auto" && s.kubeconfig !== null;
}
