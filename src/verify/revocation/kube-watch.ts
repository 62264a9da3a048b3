/**
 * The data plane's read-only watch of Delegations and IntentAgreements (`writ serve` with a
 * kubeconfig, docs/operator.md "Revocation through watches"): a revocation declared in the
 * cluster reaches this process's revocation index as soon as the API server announces it,
 * before the controller has written Postgres.
 *
 * Promises:
 * - Supervised informers (src/sources/kubernetes) per kind and watched namespace, resynced
 *   every minute; callbacks only start a check (./kube-watch-marks.ts): what the resource
 *   revokes (./kube-revocations.ts) is marked in the index once its tenancy is checked.
 * - `stale()` is true until every informer has listed and the revocations of those lists are
 *   marked, and once the watch has been down longer than `staleMs`: down means an informer is
 *   not watching (or silent past its watchdog), or the API server does not answer a probe
 *   (`GET /version` every `probeIntervalMs`), which also catches a connection that died without
 *   closing. Down is sticky: it ends only when every informer watches again and the probe
 *   answers. Informers still "watching" when the probe recovers from a stale period are
 *   restarted (their watch may have died silently).
 * - Metrics: `writ_kube_watch_up` (1 while not down), and through the marks
 *   `writ_revocation_lag_seconds{source="kubernetes",kind}`.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { Gauge, type Registry } from "prom-client";
import {
  type BackoffPolicy,
  KubeClient,
  loadKubeConfig,
  type KubeTransport,
  ApiServerProbe,
  startInformer,
  type Informer,
  type KubeObject,
  writRef,
} from "../../sources/kubernetes/index.js";
import type { Queryable } from "../../store/index.js";
import type { WatchedKind } from "./kube-revocations.js";
import { RevocationMarker, type KubeWatchLog, type RevocationMarks } from "./kube-watch-marks.js";
import type { KubeConfigSource, KubeWatchSettings } from "./kube-watch-settings.js";

export type { KubeWatchLog, RevocationMarks } from "./kube-watch-marks.js";

/** Options of a KubeRevocationWatch. */
export interface KubeWatchOptions {
  /** The API client; undefined with `failure` when the kubeconfig could not be loaded. */
  client: KubeTransport | undefined;
  /** Why there is no client: the watch is then stale from the start, with this reason. */
  failure?: string;
  index: RevocationMarks;
  /** Postgres: which organization a record is stored for. */
  db: Queryable;
  /** Namespaces to watch; empty: every namespace. */
  namespaces: readonly string[];
  /** WRIT_WATCH_STALE_MS. */
  staleMs: number;
  registry?: Registry;
  log?: KubeWatchLog;
  /** Interval of the API server probe (default staleMs/4 within 250..2000 ms); 0: no probe. */
  probeIntervalMs?: number;
  /** Reconnect backoff of the informers (default 500 ms doubling to 5 s). */
  backoff?: BackoffPolicy;
  /** Informer resync (re-checks every object; default 60 s). */
  resyncMs?: number;
}

/** The data plane reconnects faster than a controller: verify steps up while the watch is down. */
export const DATA_PLANE_WATCH_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 5000, jitter: 0.5 };
const silent: KubeWatchLog = { info: () => {}, warn: () => {} };

interface Watched {
  kind: WatchedKind;
  namespace: string | undefined;
  informer: Informer;
  createdAt: number;
}

/** The watch (see the module comment). */
export class KubeRevocationWatch {
  private watched: Watched[] = [];
  private readonly marker: RevocationMarker | undefined;
  private readonly log: KubeWatchLog;
  private readonly startedAt = Date.now();
  /** Since when the watch is down (sticky, see the module comment); undefined while up. */
  private down: number | undefined = this.startedAt;
  /** What `stale()` last answered (start-up staleness is not reported as a change). */
  private reportedStale = true;
  private probeDownSince: number | undefined;
  private readonly probe: ApiServerProbe | undefined;
  private restarting = false;
  private stopped = false;
  /** Every informer has listed once and what the lists revoke is marked (before that the watch is stale). */
  private listedOnce = false;

  constructor(private readonly opts: KubeWatchOptions) {
    this.log = opts.log ?? silent;
    const { client, registry } = opts;
    this.marker = client ? new RevocationMarker({ client, index: opts.index, db: opts.db, log: this.log, ...(registry ? { registry } : {}) }) : undefined;
    const interval = opts.probeIntervalMs ?? Math.min(2000, Math.max(250, Math.floor(opts.staleMs / 4)));
    this.probe =
      client && interval > 0
        ? new ApiServerProbe({ client, intervalMs: interval, timeoutMs: Math.max(250, Math.floor(opts.staleMs / 2)), onProbe: (ok) => this.afterProbe(ok) })
        : undefined;
    if (registry && !registry.getSingleMetric("writ_kube_watch_up")) {
      const up = () => !this.isDown();
      new Gauge({
        name: "writ_kube_watch_up",
        help: "1 while the Kubernetes watch of revocations is up, else 0 (verify fails closed once it is down longer than WRIT_WATCH_STALE_MS).",
        registers: [registry],
        collect() {
          this.set(up() ? 1 : 0);
        },
      });
    }
  }

  /** Starts the informers and the probe. */
  start(): void {
    if (!this.opts.client) {
      this.log.warn(
        { error: this.opts.failure },
        "the Kubernetes watch cannot start: verify steps up (REVOCATION_STATE_STALE) until it can; WRIT_KUBE_WATCH=off turns it off",
      );
      return;
    }
    const namespaces = this.opts.namespaces.length > 0 ? this.opts.namespaces : [undefined];
    for (const namespace of namespaces) for (const kind of ["delegation", "agreement"] as const) this.watched.push(this.watch(kind, namespace));
    this.probe?.start();
  }

  /** Resolves once every informer has listed once (or the watch is stopped). */
  async synced(): Promise<void> {
    await Promise.all(this.watched.map((w) => w.informer.synced.catch(() => {})));
  }

  /** Stops the informers and the probe. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.marker?.stop();
    this.probe?.stop();
    await Promise.all(this.watched.map((w) => w.informer.stop()));
    if (this.opts.client instanceof KubeClient) this.opts.client.close();
  }

  /** True when revocations declared in the cluster may be missing from the index: verify fails closed. */
  stale(): boolean {
    const down = this.isDown() ? this.down : undefined;
    this.listedOnce ||= this.watched.length > 0 && this.watched.every((w) => w.informer.hasSynced()) && this.marker?.inflight() === 0;
    const stale = !this.listedOnce || (down !== undefined && Date.now() - down > this.opts.staleMs);
    if (stale !== this.reportedStale) {
      this.reportedStale = stale;
      if (stale)
        this.log.warn(
          { reason: this.staleReason() },
          "the Kubernetes watch of revocations is down past its bound: verify steps up (REVOCATION_STATE_STALE) unless the controller's path vouches",
        );
      else this.log.info({}, "the Kubernetes watch of revocations is up");
    }
    return stale;
  }

  /**
   * True while this process's probe finds the API server unreachable (the controller's
   * heartbeat may then vouch for revocation state: ./controller-path.ts).
   */
  apiUnreachable(): boolean {
    return this.probe !== undefined && this.probe.unreachableSince() !== undefined;
  }

  /** Why the watch is stale, for messages; undefined when it is not. */
  staleReason(): string | undefined {
    if (!this.opts.client) return `the Kubernetes watch cannot start: ${this.opts.failure ?? "no client"}`;
    if (!this.listedOnce) return "the Kubernetes watch of revocations has not listed Delegations and IntentAgreements yet";
    const down = this.isDown() ? this.down : undefined;
    if (down === undefined || Date.now() - down <= this.opts.staleMs) return undefined;
    return `the Kubernetes watch of revocations has been down for ${Date.now() - down} ms (bound WRIT_WATCH_STALE_MS=${this.opts.staleMs})`;
  }

  /** Updates and answers whether the watch is down now. */
  private isDown(): boolean {
    if (!this.opts.client) return true;
    let earliest: number | undefined;
    const cause = (t: number) => (earliest = earliest === undefined ? t : Math.min(earliest, t));
    for (const w of this.watched) {
      if (!w.informer.hasSynced()) cause(w.createdAt);
      else if (!w.informer.healthy()) cause(w.informer.disconnectedSince() ?? Date.now());
    }
    if (this.watched.length === 0) cause(this.startedAt);
    if (this.probeDownSince !== undefined) cause(this.probeDownSince);
    if (earliest === undefined) this.down = undefined;
    else this.down ??= earliest;
    return this.down !== undefined;
  }

  private watch(kind: WatchedKind, namespace: string | undefined): Watched {
    const plural = kind === "delegation" ? "delegations" : "intentagreements";
    // Events are delivered after the first (asynchronous) list, so `informer` is set by then.
    const informer: Informer = startInformer<KubeObject>({
      client: this.opts.client,
      ...writRef(plural, namespace),
      resyncMs: this.opts.resyncMs ?? 60_000,
      backoff: this.opts.backoff ?? DATA_PLANE_WATCH_BACKOFF,
      onEvent: (type, obj) => {
        if (type === "deleted") return; // gone: the finalizer ran (or nothing was stored)
        this.marker?.check(kind, obj, type !== "resync" && informer.hasSynced());
      },
      onError: (err, context) =>
        this.log.warn({ resource: plural, namespace, context, error: err instanceof Error ? err.message : String(err) }, "Kubernetes watch failure (retried)"),
      onStateChange: () => this.isDown(),
    });
    return { kind, namespace, informer, createdAt: Date.now() };
  }

  /** After each probe (see the module comment): a long outage restarts the watches once it ends. */
  private afterProbe(answered: boolean): void {
    if (this.stopped) return;
    if (!answered) {
      this.probeDownSince ??= this.probe?.unreachableSince() ?? Date.now();
    } else if (!this.restarting) {
      // After a long outage the watches are restarted; the watch stays down until they have listed.
      if (this.probeDownSince !== undefined && Date.now() - this.probeDownSince > this.opts.staleMs) void this.restartWatching();
      else this.probeDownSince = undefined;
    }
    this.stale();
  }

  /** Restarts informers that still claim to watch (their connection may have died silently). */
  private async restartWatching(): Promise<void> {
    if (this.restarting || this.stopped) return;
    this.restarting = true;
    try {
      const fresh: Watched[] = [];
      for (const [i, w] of this.watched.entries()) {
        if (w.informer.state() !== "watching" || this.stopped) continue;
        this.log.info({ kind: w.kind, namespace: w.namespace }, "restarting a watch after the API server was unreachable");
        const f = this.watch(w.kind, w.namespace);
        this.watched[i] = f;
        fresh.push(f);
        await w.informer.stop();
      }
      // Still down until the new watches have listed and what their lists revoke is marked.
      await Promise.all(fresh.map((f) => f.informer.synced.catch(() => {})));
      for (let waited = 0; (this.marker?.inflight() ?? 0) > 0 && !this.stopped && waited < this.opts.staleMs; waited += 10)
        await new Promise((r) => setTimeout(r, 10));
    } finally {
      this.restarting = false;
      this.probeDownSince = undefined;
    }
  }
}

/** The kubeconfig of `source`. Throws when it cannot be loaded. */
export function kubeConfigFrom(source: KubeConfigSource): KubeConfig {
  if (source.kind === "file") return loadKubeConfig(source.path);
  const kc = new KubeConfig();
  kc.loadFromCluster();
  return kc;
}

/** The watch of `settings` (which must enable it); a kubeconfig that does not load gives a watch that stays stale. */
export function createKubeWatch(
  settings: KubeWatchSettings,
  deps: Omit<KubeWatchOptions, "client" | "failure" | "namespaces" | "staleMs">,
): KubeRevocationWatch {
  const base = { ...deps, namespaces: settings.namespaces, staleMs: settings.staleMs };
  if (!settings.kubeconfig) return new KubeRevocationWatch({ ...base, client: undefined, failure: "no kubeconfig" });
  try {
    return new KubeRevocationWatch({ ...base, client: new KubeClient(kubeConfigFrom(settings.kubeconfig)) });
  } catch (err) {
    return new KubeRevocationWatch({ ...base, client: undefined, failure: `cannot load the kubeconfig: ${err instanceof Error ? err.message : String(err)}` });
  }
}
