/**
 * Metrics of the revocation paths, read at scrape time:
 * - `writ_revocation_degraded`: 1 while verify decides with its own Kubernetes watch down, on the
 *   controller's word (its heartbeat in Postgres: path `controller`, `outage` or `grace`), else 0.
 * - `writ_revocation_fresh_via{path}`: 1 for the path revocation state is fresh by now (`watch`,
 *   `controller`, `outage`, `grace`), or `none` while it is stale.
 * - `writ_controller_heartbeat_age_seconds`: how old the controller's last heartbeat is (NaN
 *   before one was read).
 */
import { Gauge, type Registry } from "prom-client";
import { registered } from "../../metrics/index.js";
import type { ControllerPath } from "./controller-path.js";
import type { WatchedRevocationIndex } from "./kube-watch-index.js";

const PATHS = ["watch", "controller", "outage", "grace", "none"] as const;

/** Registers the metrics of `index` and `path` on `registry` (once per registry). */
export function controllerPathMetrics(registry: Registry, index: WatchedRevocationIndex, path: ControllerPath): void {
  registered(
    registry,
    "writ_revocation_degraded",
    () =>
      new Gauge({
        name: "writ_revocation_degraded",
        help: "1 while verify decides with its own Kubernetes watch down, on the controller's heartbeat in Postgres; else 0.",
        registers: [registry],
        collect() {
          const f = index.freshness();
          this.set(!f.stale && f.via !== "watch" ? 1 : 0);
        },
      }),
  );
  registered(
    registry,
    "writ_revocation_fresh_via",
    () =>
      new Gauge({
        name: "writ_revocation_fresh_via",
        help: "1 for the path revocation state is fresh by (watch, controller, outage, grace), or none while it is stale.",
        labelNames: ["path"] as const,
        registers: [registry],
        collect() {
          const f = index.freshness();
          const now = f.stale ? "none" : (f.via ?? "watch");
          for (const p of PATHS) this.set({ path: p }, p === now ? 1 : 0);
        },
      }),
  );
  registered(
    registry,
    "writ_controller_heartbeat_age_seconds",
    () =>
      new Gauge({
        name: "writ_controller_heartbeat_age_seconds",
        help: "Age of the controller's last heartbeat in Postgres, seconds (NaN before one was read).",
        registers: [registry],
        collect() {
          const age = path.heartbeatAgeMs();
          this.set(age === undefined ? Number.NaN : age / 1000);
        },
      }),
  );
}
