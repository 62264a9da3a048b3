/**
 * Runs the webhook delivery worker with the data-plane app: started when the app is ready,
 * stopped before it closes (in `preClose`, so before the pool ends).
 *
 * Promise: a worker runs only when the app has a database, the log signing key is loaded and
 * BUR_WEBHOOK_WORKER is not 0; it waits for the schema (`schemaReady`) and counts on the app's
 * metrics registry; deliveries go only where the outbound policy (WRIT_OUTBOUND_*) allows.
 * Without a worker, alerts stay in the outbox until one runs.
 */
import fp from "fastify-plugin";
import { startDeliveryWorker, type DeliveryWorker } from "./worker.js";

export default fp(
  async (app) => {
    let worker: DeliveryWorker | null = null;
    app.addHook("onReady", async () => {
      const s = app.settings.webhooks;
      if (!app.pool || !app.logSigner || !s.worker) {
        if (app.pool && s.worker) app.log.warn("SVC_LOG_SIGNING_SEED is not loaded: webhook alerts are not delivered");
        return;
      }
      worker = startDeliveryWorker(app.pool, app.logSigner, {
        timeoutMs: s.timeoutMs,
        connectTimeoutMs: s.connectTimeoutMs,
        perDestination: s.destinationConcurrency,
        perHost: s.hostConcurrency,
        perOrganization: s.orgConcurrency,
        policy: app.settings.outbound,
        retry: { minMs: s.backoffMinMs, maxMs: s.backoffMaxMs, maxAttempts: s.maxAttempts },
        concurrency: s.concurrency,
        pollIntervalMs: s.pollMs,
        registry: app.metrics.registry,
        log: app.log.child({ component: "webhooks" }),
        isReady: () => app.schemaReady(),
      });
    });
    app.addHook("preClose", async () => {
      await worker?.stop();
      worker = null;
    });
  },
  { name: "writ-webhooks", dependencies: ["writ-db", "writ-keys", "writ-metrics"] },
);
