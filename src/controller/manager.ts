/**
 * `writ controller` assembled: informers (one per kind and watched namespace, on every replica),
 * a work queue and workers per kind (only on the leader, after every cache has synced), leader
 * election on a Lease (when WRIT_LEADER_ELECTION_LEASE is set; otherwise this replica leads), the
 * health/metrics server, and the reconcilers' shared context.
 *
 * Informer callbacks only queue keys (filtered by `shouldEnqueue`). A standby keeps its caches
 * and queues warm (keys are deduplicated, so a queue holds each key at most once) and starts
 * processing the moment it acquires the lease. When the leader cannot renew within the renew
 * deadline (10 s, before the 15 s lease can pass to another replica) it pauses processing and
 * campaigns again with its caches intact, so an API server outage longer than the deadline costs
 * a pause, not a restart (controller-runtime exits instead; the safety is the same: no replica
 * processes without a lease it renewed within the deadline). `stop()` releases the lease so a
 * standby takes over at once.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import type { Pool } from "pg";
import { getAgent } from "../store/agents.js";
import { getOrg } from "../store/orgs.js";
import { migrate } from "../store/migrate.js";
import { createPool } from "../store/pool.js";
import { KubeClient, loadKubeConfig, type KubeTransport } from "../sources/kubernetes/client.js";
import { isKubeError } from "../sources/kubernetes/errors.js";
import { startInformer, type Informer } from "../sources/kubernetes/informer.js";
import { objectKey } from "../sources/kubernetes/objects.js";
import { systemClock, type Clock } from "../core/time/clock.js";
import { shouldEnqueue } from "./event-filter.js";
import { EventRecorder } from "./events.js";
import { startHealthServer, type HealthServer } from "./health-server.js";
import { CONTROLLER_NAMES, type WritResource } from "./kinds.js";
import { writRef } from "../sources/kubernetes/writ-refs.js";
import { LeaderElector, leaderIdentity } from "./leader-election.js";
import { errorText, jsonLogger, type Logger } from "./log.js";
import { createControllerMetrics, type ControllerMetrics } from "./metrics.js";
import { NamespaceBindings } from "../sources/kubernetes/namespace-binding.js";
import { defaultRateLimiter } from "./queue/rate-limiter.js";
import { WorkQueue } from "./queue/work-queue.js";
import { reconcileAgreement } from "./reconcilers/agreement.js";
import type { ReconcileContext, ResourceCache } from "./reconcilers/context.js";
import { reconcileDelegation } from "./reconcilers/delegation.js";
import { reconcileSubscription } from "./reconcilers/subscription.js";
import { ControllerRunner, type ReconcileResult } from "./runner.js";
import type { ControllerSettings } from "./settings.js";

/** A running controller. */
export interface ControllerHandle {
  /** URL of the health/metrics server. */
  readonly url: string;
  /** This replica's leader election identity. */
  readonly identity: string;
  readonly metrics: ControllerMetrics;
  /** Resolves (with exit status 0) once `stop()` has finished. */
  readonly done: Promise<number>;
  isLeader(): boolean;
  /** True once every informer has listed. */
  synced(): boolean;
  /** Stops everything; releases the lease when leading. */
  stop(): Promise<void>;
}

/** What can be injected (tests, `writ dev`). */
export interface ControllerDeps {
  kubeconfig?: KubeConfig;
  /** The API to reconcile against instead of a KubeClient over `kubeconfig` (`writ dev`: the local API server of src/sources/local). */
  client?: KubeTransport;
  log?: Logger;
  clock?: Clock;
  /** Skip migrations (the database is migrated by its owner). */
  skipMigrations?: boolean;
}

type Plural = "delegations" | "intentagreements" | "subscriptions";

/** One kind's informers (one per watched namespace) seen as one cache. */
function cacheOf(informers: readonly Informer<WritResource>[]): ResourceCache {
  return {
    get: (namespace, name) => {
      for (const i of informers) {
        const o = i.get(name, namespace);
        if (o) return o;
      }
      return undefined;
    },
    list: (namespace) => informers.flatMap((i) => i.list(namespace)),
  };
}

/** Starts the controller with `settings` (see the module comment). */
export async function startController(settings: ControllerSettings, deps: ControllerDeps = {}): Promise<ControllerHandle> {
  const log = deps.log ?? jsonLogger(settings.logLevel);
  const clock = deps.clock ?? systemClock;
  for (const p of settings.problems) log.warn("setting ignored", { problem: p });
  if (!deps.skipMigrations) await migrate(settings.databaseUrl, { info: (msg) => log.info(msg) });
  const owned = deps.client ? undefined : new KubeClient(deps.kubeconfig ?? loadKubeConfig());
  const client: KubeTransport = deps.client ?? (owned as KubeClient);
  const pool: Pool = createPool(settings.databaseUrl, {
    max: settings.workers * 3 + 4,
    applicationName: "writ-controller",
    onError: (err) => log.warn("idle database connection failed", { error: err.message }),
  });
  const metrics = createControllerMetrics();
  const identity = leaderIdentity(settings.podName);
  const namespaces: (string | undefined)[] = settings.watchNamespaces.length > 0 ? settings.watchNamespaces : [undefined];

  const queues = {
    delegation: new WorkQueue({ clock, rateLimiter: defaultRateLimiter(clock, settings.rateLimits), metrics: metrics.queue(CONTROLLER_NAMES.delegation) }),
    agreement: new WorkQueue({ clock, rateLimiter: defaultRateLimiter(clock, settings.rateLimits), metrics: metrics.queue(CONTROLLER_NAMES.agreement) }),
    subscription: new WorkQueue({ clock, rateLimiter: defaultRateLimiter(clock, settings.rateLimits), metrics: metrics.queue(CONTROLLER_NAMES.subscription) }),
  };
  const informersOf = (plural: Plural, queue: WorkQueue): Informer<WritResource>[] =>
    namespaces.map((namespace) =>
      startInformer<WritResource>({
        client,
        ...writRef(plural, namespace),
        resyncMs: settings.resyncMs,
        silenceTimeoutMs: settings.silenceMs,
        onEvent: (type, obj, old) => {
          if (shouldEnqueue(type, obj, old)) queue.add(objectKey(obj));
        },
        onError: (err, context) => log.warn("informer recovered from a failure", { resource: plural, namespace, context, error: errorText(err) }),
        onStateChange: (state) => log.debug("informer state", { resource: plural, namespace, state }),
      }),
    );
  const informers = {
    delegations: informersOf("delegations", queues.delegation),
    agreements: informersOf("intentagreements", queues.agreement),
    subscriptions: informersOf("subscriptions", queues.subscription),
  };
  const all = [...informers.delegations, ...informers.agreements, ...informers.subscriptions];

  const ctx: ReconcileContext = {
    client,
    pool,
    clock,
    log,
    events: new EventRecorder(client, { instance: identity, clock, log }),
    bindings: new NamespaceBindings(client, (id) => getOrg(pool, id), clock, 10_000, async (id) => (await getAgent(pool, id))?.org_id),
    caches: { delegations: cacheOf(informers.delegations), agreements: cacheOf(informers.agreements), subscriptions: cacheOf(informers.subscriptions) },
    enqueue: {
      delegation: (k) => queues.delegation.add(k),
      agreement: (k) => queues.agreement.add(k),
      subscription: (k) => queues.subscription.add(k),
    },
    logSigner: settings.logSigner,
    logOrigin: settings.logOrigin,
    mandates: settings.mandates,
  };
  if (!settings.logSigner) log.warn("SVC_LOG_SIGNING_SEED is unset: signed agreements are stored but not logged (Ready=False, LogNotConfigured)");

  const runner = (name: string, queue: WorkQueue, fn: (c: ReconcileContext, key: string) => Promise<ReconcileResult>) =>
    new ControllerRunner({
      name,
      queue,
      workers: settings.workers,
      metrics,
      log,
      reconcile: (key) => fn(ctx, key),
      isConflict: (err) => isKubeError(err, "CONFLICT"),
    });
  const runners = [
    runner(CONTROLLER_NAMES.delegation, queues.delegation, reconcileDelegation),
    runner(CONTROLLER_NAMES.agreement, queues.agreement, reconcileAgreement),
    runner(CONTROLLER_NAMES.subscription, queues.subscription, reconcileSubscription),
  ];

  let leading = false;
  let stopping = false;
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  const leaseLabel = settings.leaseName ?? "none";
  metrics.leading(leaseLabel, false);
  const startProcessing = async () => {
    await Promise.all(all.map((i) => i.synced)).catch(() => {});
    if (stopping || !leading) return;
    log.info("caches synced; processing", { identity });
    for (const r of runners) r.start();
  };
  const stopProcessing = () => Promise.all(runners.map((r) => r.stop()));

  let elector: LeaderElector | undefined;
  if (settings.leaseName) {
    elector = new LeaderElector({
      client,
      namespace: settings.leaseNamespace,
      name: settings.leaseName,
      identity,
      clock,
      log,
      onStartedLeading: () => {
        leading = true;
        metrics.leading(leaseLabel, true);
        void startProcessing();
      },
      onStoppedLeading: () => {
        leading = false;
        metrics.leading(leaseLabel, false);
        for (const r of runners) r.pause();
        if (!stopping) log.warn("processing paused until the lease is held again", { identity });
      },
      onNewLeader: (holder) => log.info("leader observed", { holder, self: holder === identity }),
    });
    elector.start();
  } else {
    leading = true;
    metrics.leading(leaseLabel, true);
    void startProcessing();
  }

  let server: HealthServer;
  try {
    server = await startHealthServer({
      host: settings.host,
      port: settings.port,
      registry: metrics.registry,
      ready: () => {
        const waiting = all.filter((i) => !i.hasSynced()).length;
        return waiting === 0 ? { ok: true } : { ok: false, detail: `${waiting} informer cache(s) not synced` };
      },
    });
  } catch (err) {
    stopping = true;
    await elector?.stop();
    await stopProcessing();
    await Promise.all(all.map((i) => i.stop()));
    await pool.end();
    owned?.close();
    throw err;
  }
  log.info("writ controller started", {
    url: server.url,
    identity,
    lease: settings.leaseName ? `${settings.leaseNamespace}/${settings.leaseName}` : null,
    namespaces: settings.watchNamespaces.length > 0 ? settings.watchNamespaces : "all",
  });

  return {
    url: server.url,
    identity,
    metrics,
    done,
    isLeader: () => leading,
    synced: () => all.every((i) => i.hasSynced()),
    async stop() {
      if (stopping) return;
      stopping = true;
      await elector?.stop({ release: true });
      leading = false;
      await stopProcessing();
      await Promise.all(all.map((i) => i.stop()));
      await server.close();
      await pool.end();
      owned?.close();
      finish(0);
    },
  };
}
