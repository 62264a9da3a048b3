/**
 * The verify path's per-process state, started and stopped with the app: the revocation index
 * (the LISTEN connection, app.changeFeed, plus the revoked ids loaded from the tables), the
 * candidate cache (agents' snapshots following the change notices of the same connection, and
 * the prepared records under them), the group commits of refusals and of spends, the
 * acknowledgement-domain key directory, the verify metrics, and what `verifyAction` runs with
 * (`verify`: its gather side, its decision log, the clock and the policy), built once here.
 *
 * Promises:
 * - Decorates `app.verifyRuntime` (null when the app has no database). Building does no I/O.
 * - On ready, the index starts: when the schema is ready the app waits (up to 3 s) for its
 *   first load, otherwise (`writ serve` migrating in the background) it loads in the
 *   background. Until its first load, and while its connection has been down longer than its
 *   bound, the index is stale and verify steps up (REVOCATION_STATE_STALE).
 * - The index listens on its own connection (DATABASE_URL, or the pool's connection settings)
 *   and is stopped in `preClose`, before the pool ends.
 * - With a kubeconfig (WRIT_KUBE_WATCH auto, src/verify/revocation/kube-watch-settings.ts) the Kubernetes
 *   revocation watch (src/verify/revocation/kube-watch.ts) starts with the index, marks revocations seen
 *   on Delegations and IntentAgreements in it, and makes it stale while the watch is down
 *   longer than WRIT_WATCH_STALE_MS; it is stopped in `preClose` too.
 * - With the watch, the controller's path (src/verify/revocation/controller-path.ts: its heartbeat
 *   in Postgres, WRIT_CONTROLLER_PATH) is polled too, and vouches for revocation state while the
 *   watch is down; verify then decides "degraded" (`writ_revocation_degraded` 1, `/readyz` says
 *   so), and fails closed only when neither path is fresh.
 * - `everFresh()` turns true the first time the index is not stale, and stays true; `/readyz`
 *   answers 503 until then (./health.ts), so a new replica gets traffic once it can decide;
 *   afterwards `/readyz` answers 503 while the index is stale.
 */
import fp from "fastify-plugin";
import { DEFAULT_POLICY, type EvalPolicy } from "../../core/evaluate/index.js";
import { fxSourceFor, rateFor } from "../../fx/index.js";
import {
  DecisionLog,
  storeDecisions,
  refusalQueue,
  spendQueue,
  CandidateCache,
  StoreGather,
  AckDomainDirectory,
  verifyMetrics,
  type VerifyMetrics,
  type VerifyDeps,
  type RevocationIndex,
  WatchedRevocationIndex,
  type Freshness,
  VerifyApprovals,
  ControllerPath,
  controllerPathMetrics,
  type KubeRevocationWatch,
  kubeWatchEnabled,
} from "../../verify/index.js";
import { logAppendOptions } from "../routes/shared/registry-log.js";
import { approvalOptionsOf } from "../routes/approvals/approval.js";

/** The verify path's state. */
export interface VerifyRuntime {
  readonly index: RevocationIndex;
  /** The candidate cache (agents' snapshots and the prepared records under them): routes that change an agent `forget` it. */
  readonly candidates: CandidateCache;
  readonly metrics: VerifyMetrics;
  /** What `verifyAction` runs with (built once, at start-up). */
  readonly verify: VerifyDeps;
  /** The evaluation policy (the default one, with WRIT_DENIED_ATTEMPT_BURST). */
  readonly policy: EvalPolicy;
  /** The Kubernetes revocation watch, or null when it does not run. */
  readonly kubeWatch: KubeRevocationWatch | null;
  /** How revocation state is fresh now (through the watch, the controller's path), or why it is stale. */
  freshness(): Freshness;
  /**
   * True once the index has been fresh (loaded, and the Kubernetes watch, when it runs, synced)
   * at least once: `/readyz` waits for it. A later staleness does not undo it; verify then
   * fails closed (REVOCATION_STATE_STALE) and `writ_revocation_index_stale` says so.
   */
  everFresh(): boolean;
}

declare module "fastify" {
  interface FastifyInstance {
    /** The verify path's state, or null without a database. */
    readonly verifyRuntime: VerifyRuntime | null;
  }
}

/** Longest wait for the index's first load at start-up (ms). */
export const FIRST_LOAD_WAIT_MS = 3000;

export default fp(
  async (app) => {
    const pool = app.pool;
    const feed = app.changeFeed;
    let runtime: VerifyRuntime | null = null;
    let index: RevocationIndex | null = null;
    let watch: KubeRevocationWatch | null = null;
    let controllerPath: ControllerPath | null = null;
    if (pool && feed) {
      const idx = new WatchedRevocationIndex({ db: pool, source: feed });
      index = idx;
      idx.on("failure", (err) => app.log.warn({ err }, "revocation index load failed; retrying"));
      if (kubeWatchEnabled(app.settings.kubeWatch)) {
        // Loaded only when enabled: the Kubernetes client is most of the server's modules otherwise.
        const { createKubeWatch } = await import("../../verify/revocation/kube-watch.js");
        const w = createKubeWatch(app.settings.kubeWatch, { index: idx, db: pool, registry: app.metrics.registry, log: app.log });
        watch = w;
        idx.attachWatch(w);
        const k = app.settings.kubeWatch;
        if (k.controllerPath) {
          let via: string | undefined = "watch";
          controllerPath = new ControllerPath({
            db: pool,
            lease: k.controllerLease,
            staleMs: k.staleMs,
            outageMs: k.outageGraceMs,
            apiUnreachable: () => w.apiUnreachable(),
            // Each poll re-evaluates freshness (so the grace after the path vouched is measured from its last poll) and logs changes.
            onReading: () => {
              const f = idx.freshness();
              const now = f.stale ? undefined : f.via;
              if (now === via) return;
              via = now;
              if (now === undefined) app.log.warn({ reason: f.detail }, "revocation state is stale: verify steps up (REVOCATION_STATE_STALE)");
              else if (now === "watch") app.log.info("revocation state is fresh through the Kubernetes watch");
              else
                app.log.warn(
                  { via: now, reason: f.detail },
                  "verify decides degraded: the Kubernetes watch is down, the controller's path vouches for revocation state",
                );
            },
          });
          idx.attachControllerPath(controllerPath, k.staleMs);
          controllerPathMetrics(app.metrics.registry, idx, controllerPath);
        }
      }
      let fresh = false;
      const candidates = new CandidateCache({
        ttlMs: app.settings.verify.cacheTtlMs,
        maxEntries: app.settings.verify.cacheMaxAgents,
        denialWindowSeconds: app.settings.verify.deniedAttemptWindowSeconds,
      }).follow(feed);
      const metrics = verifyMetrics(app.metrics.registry, () => idx.stale(), candidates);
      const spends = spendQueue(pool, {
        maxBatch: app.settings.verify.spendBatchMax,
        waitMs: app.settings.verify.spendBatchWaitMs,
        inFlight: app.settings.verify.spendBatchesInFlight,
        hourCountersFrom: app.settings.verify.periodHourCountersFrom,
        observe: (seconds, size) => {
          metrics.ledgerAppend.observe(seconds);
          metrics.spendBatchSize.observe(size);
        },
      });
      app.addHook("onClose", async () => spends.close()); // the Citus workers' pools (WRIT_CITUS_DIRECT)
      const fx = fxSourceFor(app.settings.fx, app.settings.outbound);
      const gather = new StoreGather({
        pool,
        index: idx,
        candidates,
        ackDomains: new AckDomainDirectory({ settings: app.settings.verify, policy: app.settings.outbound }),
        rate: (from, to, day, now) => rateFor(pool, from, to, day, { source: fx, now }),
      });
      // Approvals of STEP_UPs the principal can clear (src/verify/approvals.ts), at the portal's approvals page.
      const approvals = new VerifyApprovals(pool, approvalOptionsOf(app));
      const log = new DecisionLog({
        approvals,
        store: storeDecisions(pool, { refusals: refusalQueue(pool), spends }),
        upkeep: gather,
        metrics,
        logSigner: () => app.logSigner,
        logOptions: (now) => logAppendOptions(app, now),
      });
      const policy = { ...DEFAULT_POLICY, denialBurstCount: app.settings.verify.deniedAttemptBurst };
      runtime = {
        index: idx,
        candidates,
        metrics,
        verify: { gather, log, clock: () => app.clock(), proposedAtSkewMs: app.settings.verify.proposedAtSkewSeconds * 1000, policy, approvals },
        policy,
        kubeWatch: watch,
        freshness: () => idx.freshness(),
        everFresh: () => (fresh ||= !idx.stale()),
      };
    } else {
      verifyMetrics(app.metrics.registry, () => false);
    }
    app.decorate("verifyRuntime", runtime);

    app.addHook("onReady", async () => {
      if (!index) return;
      const started = index.start();
      started.catch((err: unknown) => app.log.error({ err }, "revocation index failed to start"));
      watch?.start();
      controllerPath?.start();
      if (!app.schemaReady()) return;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, FIRST_LOAD_WAIT_MS)));
      await Promise.race([Promise.all([started.catch(() => {}), watch?.synced()]), timeout]);
      clearTimeout(timer);
      if (index.stale()) app.log.warn("revocation index not loaded yet: verify steps up until it is");
    });
    app.addHook("preClose", async () => {
      controllerPath?.stop();
      await watch?.stop();
      await index?.stop();
    });
  },
  { name: "writ-verify-runtime", dependencies: ["writ-db", "writ-changes", "writ-metrics"] },
);
