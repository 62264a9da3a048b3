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
import { getAgent, getOrg, migrateWhenReachable, createPool, type PoolOptions } from "../store/index.js";
import {
  KubeClient,
  loadKubeConfig,
  type KubeTransport,
  isKubeError,
  startInformer,
  type Informer,
  objectKey,
  writRef,
  NamespaceBindings,
  ApiServerProbe,
} from "../sources/kubernetes/index.js";
import { systemClock, type Clock } from "../core/time/index.js";
import { shouldEnqueue } from "./event-filter.js";
import { EventRecorder } from "./events.js";
import { startHealthServer, type HealthServer } from "../metrics/index.js";
import { CONTROLLER_NAMES, type WritResource } from "./kinds.js";
import { LeaderElector, leaderIdentity } from "./leader-election.js";
import { errorText, jsonLogger, type Logger } from "./log.js";
import { createControllerMetrics, type ControllerMetrics } from "./metrics.js";
import { defaultRateLimiter } from "./queue/rate-limiter.js";
import { WorkQueue } from "./queue/work-queue.js";
import { reconcileAgreement } from "./reconcilers/agreement.js";
import type { ReconcileContext, ResourceCache } from "./reconcilers/context.js";
import { reconcileDelegation } from "./reconcilers/delegation.js";
import { reconcileSubscription } from "./reconcilers/subscription.js";
import { ControllerRunner, type ReconcileResult } from "./runner.js";
import { followRevocations } from "./revocation/follower.js";
import { ControllerHeartbeat } from "./heartbeat.js";
import { StatusMemo } from "./status-memo.js";
import { admissionLookup } from "./admission/lookup.js";
import { reviewAdmission } from "./admission/review.js";
import { startAdmissionServer, type AdmissionServer } from "./admission/server.js";
import type { ControllerSettings } from "./settings.js";
import { StopGroup } from "../core/lifecycle/index.js";

/** A running controller. */
export interface ControllerHandle {
  /** URL of the health/metrics server. */
  readonly url: string;
  /** URL of the admission webhook server, when WRIT_WEBHOOK_PORT is set. */
  readonly webhookUrl: string | undefined;
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

/** The controller's name in the `managedFields` of everything it writes (status, finalizers, Events, the Lease). */
export const FIELD_MANAGER = "writ-controller";

/**
 * Informers reconnect within 5 s of the API server's return (client-go's reflector waits up to
 * 30 s): the controller's heartbeat, which the data plane may decide on, catches up sooner.
 */
const INFORMER_BACKOFF = { initialMs: 500, maxMs: 5000, jitter: 0.5 };

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

/** The options of the controller's Postgres pool (its size and its sessions' settings). */
export function controllerPoolOptions(settings: Pick<ControllerSettings, "workers" | "synchronousCommit">): PoolOptions {
  return {
    // A worker holds at most one connection at a time; a few more for the heartbeat, the
    // admission webhook's lookups and the bindings.
    max: settings.workers + 8,
    applicationName: "writ-controller",
    ...(settings.synchronousCommit ? { synchronousCommit: settings.synchronousCommit } : {}),
  };
}

/** Starts the controller with `settings` (see the module comment). */
export async function startController(settings: ControllerSettings, deps: ControllerDeps = {}): Promise<ControllerHandle> {
  const log = deps.log ?? jsonLogger(settings.logLevel);
  const clock = deps.clock ?? systemClock;
  for (const p of settings.problems) log.warn("setting ignored", { problem: p });
  // No kubeconfig is one clear error at start, before anything waits on the database.
  const owned = deps.client ? undefined : new KubeClient(deps.kubeconfig ?? loadKubeConfig(), { fieldManager: FIELD_MANAGER });
  // Postgres not reachable yet (started before it, or a failover without a primary): the
  // migrations are retried until it is (Kubernetes' probes decide how long that may take).
  if (!deps.skipMigrations) {
    await migrateWhenReachable(settings.databaseUrl, {
      info: (msg) => log.info(msg),
      unreachable: (err, wait) =>
        log.warn("database unreachable; migrations will be retried", { error: err instanceof Error ? err.message : String(err), retry_in_ms: wait }),
    });
  }
  // Every part registers its stop as it starts; `stop()` and a failed start share this teardown.
  const parts = new StopGroup();
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  const running = await parts.startAll(async () => {
    if (owned) parts.add("kubernetes client", () => owned.close());
    return startParts(settings, { client: deps.client ?? (owned as KubeClient), log, clock }, parts);
  });
  const { server, admission, identity, metrics, leadership, informers } = running;
  log.info("writ controller started", {
    url: server.url,
    webhook: admission?.url ?? null,
    identity,
    lease: settings.leaseName ? `${settings.leaseNamespace}/${settings.leaseName}` : null,
    namespaces: settings.watchNamespaces.length > 0 ? settings.watchNamespaces : "all",
  });

  return {
    url: server.url,
    webhookUrl: admission?.url,
    identity,
    metrics,
    done,
    isLeader: () => leadership.leading,
    synced: () => informers.every((i) => i.hasSynced()),
    async stop() {
      if (parts.stopped) return;
      await parts.stop();
      finish(0);
    },
  };
}

/** What `startParts` started. */
interface Parts {
  server: HealthServer;
  admission: AdmissionServer | undefined;
  identity: string;
  metrics: ControllerMetrics;
  leadership: { leading: boolean };
  informers: readonly Informer<WritResource>[];
}

/**
 * The controller's parts, each registered in `parts` as it starts: the pool, the informers and
 * queues, the revocation follower, leader election and the workers it runs, the API server
 * probe and the heartbeat, the admission webhook and the health server. Torn down in reverse:
 * the servers stop answering, the workers drain, the lease is released, then the watches and
 * the pool close.
 */
async function startParts(settings: ControllerSettings, deps: { client: KubeTransport; log: Logger; clock: Clock }, parts: StopGroup): Promise<Parts> {
  const { client, log, clock } = deps;
  const pool: Pool = createPool(settings.databaseUrl, {
    ...controllerPoolOptions(settings),
    onError: (err) => log[(err as { code?: unknown }).code === "57P01" ? "debug" : "warn"]("idle database connection failed", { error: err.message }),
  });
  parts.add("database pool", () => pool.end());
  const metrics = createControllerMetrics();
  const identity = leaderIdentity(settings.podName);
  const namespaces: (string | undefined)[] = settings.watchNamespaces.length > 0 ? settings.watchNamespaces : [undefined];

  const queueOf = (name: string): WorkQueue => {
    const q: WorkQueue = new WorkQueue({
      clock,
      rateLimiter: defaultRateLimiter(clock, settings.rateLimits),
      metrics: metrics.queue(name, () => q.unfinishedWork()),
    });
    return q;
  };
  const queues = {
    delegation: queueOf(CONTROLLER_NAMES.delegation),
    agreement: queueOf(CONTROLLER_NAMES.agreement),
    subscription: queueOf(CONTROLLER_NAMES.subscription),
  };
  const statusMemo = new StatusMemo();
  const informersOf = (plural: Plural, queue: WorkQueue): Informer<WritResource>[] =>
    namespaces.map((namespace) =>
      startInformer<WritResource>({
        client,
        ...writRef(plural, namespace),
        resyncMs: settings.resyncMs,
        silenceTimeoutMs: settings.silenceMs,
        backoff: INFORMER_BACKOFF,
        onEvent: (type, obj, old) => {
          if (type === "deleted") statusMemo.forget(obj.metadata.uid);
          if (shouldEnqueue(type, obj, old, statusMemo)) queue.add(objectKey(obj));
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
  parts.add("informers", () => Promise.all(all.map((i) => i.stop())));

  const ctx: ReconcileContext = {
    client,
    pool,
    clock,
    log,
    events: new EventRecorder(client, { instance: identity, clock, log }),
    bindings: new NamespaceBindings(
      client,
      (id) => getOrg(pool, id),
      clock,
      10_000,
      async (id) => (await getAgent(pool, id))?.org_id,
    ),
    caches: { delegations: cacheOf(informers.delegations), agreements: cacheOf(informers.agreements), subscriptions: cacheOf(informers.subscriptions) },
    enqueue: {
      delegation: (k) => queues.delegation.add(k),
      agreement: (k) => queues.agreement.add(k),
      subscription: (k) => queues.subscription.add(k),
    },
    logSigner: settings.logSigner,
    logOrigin: settings.logOrigin,
    statusMemo,
    mandates: settings.mandates,
  };
  // Revocations made outside the cluster (HTTP, another replica) reach the status at once.
  const revocations = followRevocations(settings.databaseUrl, pool, ctx, log);
  parts.add("revocation follower", () => revocations.stop());
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
  const leadership = startLeadership(settings, { client, log, clock, metrics, identity }, parts, {
    synced: () => Promise.all(all.map((i) => i.synced)).then(() => {}),
    start: () => runners.forEach((r) => r.start()),
    pause: () => runners.forEach((r) => r.pause()),
    stop: () => Promise.all(runners.map((r) => r.stop())),
  });

  // How far this replica has observed the cluster, published through Postgres for the data plane.
  const probe = new ApiServerProbe({ client, intervalMs: 1000, timeoutMs: 1000 });
  probe.start();
  parts.add("API server probe", () => probe.stop());
  metrics.watch(
    () => all.every((i) => i.healthy()),
    () => probe.reachable(),
  );
  const heartbeat = new ControllerHeartbeat({
    pool,
    lease: settings.leaseName ?? "none",
    identity,
    intervalMs: settings.heartbeatIntervalMs,
    clock,
    log,
    informers: [...informers.delegations, ...informers.agreements],
    queues: [queues.delegation, queues.agreement],
    probe,
    leading: () => leadership.leading,
  });
  heartbeat.start();
  parts.add("heartbeat", () => heartbeat.stop());

  const webhookPort = settings.webhookPort;
  const lookup = webhookPort === undefined ? undefined : admissionLookup(pool, ctx.bindings, revocations.index);
  const admission =
    webhookPort === undefined || lookup === undefined
      ? undefined
      : await parts.start(
          "admission webhook",
          () =>
            startAdmissionServer({
              host: settings.host,
              port: webhookPort,
              certDir: settings.webhookCertDir,
              log,
              review: (req, phase) => reviewAdmission(req, { now: clock.now(), phase, lookup }),
            }),
          (s) => s.close(),
        );
  const server = await parts.start(
    "health server",
    () =>
      startHealthServer({
        host: settings.host,
        port: settings.port,
        registry: metrics.registry,
        ready: () => {
          const waiting = all.filter((i) => !i.hasSynced()).length;
          return waiting === 0 ? { ok: true } : { ok: false, detail: `${waiting} informer cache(s) not synced` };
        },
      }),
    (s) => s.close(),
  );
  return { server, admission, identity, metrics, leadership, informers: all };
}

/** The workers as leadership switches them. */
interface Processing {
  /** Resolves once every cache has synced (or failed to). */
  synced(): Promise<void>;
  start(): void;
  pause(): void;
  stop(): Promise<unknown>;
}

/**
 * Leader election on the Lease (or leadership at once without one) driving `processing`: the
 * workers start once the caches synced while this replica leads, pause when it stops leading.
 * Registered in `parts`: the workers drain first, then the lease is released.
 */
function startLeadership(
  settings: ControllerSettings,
  deps: { client: KubeTransport; log: Logger; clock: Clock; metrics: ControllerMetrics; identity: string },
  parts: StopGroup,
  processing: Processing,
): { leading: boolean } {
  const { log, metrics, identity } = deps;
  const state = { leading: false };
  const leaseLabel = settings.leaseName ?? "none";
  metrics.leading(leaseLabel, false);
  const lead = (leading: boolean) => {
    state.leading = leading;
    metrics.leading(leaseLabel, leading);
  };
  const startProcessing = async () => {
    await processing.synced().catch(() => {});
    if (parts.stopped || !state.leading) return;
    log.info("caches synced; processing", { identity });
    processing.start();
  };
  if (settings.leaseName) {
    const elector = new LeaderElector({
      client: deps.client,
      namespace: settings.leaseNamespace,
      name: settings.leaseName,
      identity,
      ...settings.leaderElection,
      clock: deps.clock,
      log,
      onStartedLeading: () => {
        lead(true);
        void startProcessing();
      },
      onStoppedLeading: () => {
        lead(false);
        processing.pause();
        if (!parts.stopped) log.warn("processing paused until the lease is held again", { identity });
      },
      onNewLeader: (holder) => log.info("leader observed", { holder, self: holder === identity }),
    });
    elector.start();
    parts.add("leader election", async () => {
      await elector.stop({ release: true });
      state.leading = false;
    });
  } else {
    lead(true);
    void startProcessing();
    parts.add("leadership", () => {
      state.leading = false;
    });
  }
  parts.add("workers", () => processing.stop());
  return state;
}
