/**
 * Runs the retention worker with the data-plane app: started when the app is ready (only with
 * a database and WRIT_RETENTION_INTERVAL_MS above 0), stopped in `preClose`, before the pool
 * ends. Exposes it as `app.retention` (null when off) for tests and operators' scripts. The hold
 * expiry sweep (./hold-expiry.ts) runs beside it when WRIT_HOLD_EXPIRY_SECONDS is above 0
 * (`app.holdExpiry`).
 */
import fp from "fastify-plugin";
import { startRetention, type RetentionWorker } from "./worker.js";
import { startHoldExpiry, type HoldExpiry } from "./hold-expiry.js";

declare module "fastify" {
  interface FastifyInstance {
    retention: RetentionWorker | null;
    /** The hold expiry sweep (WRIT_HOLD_EXPIRY_SECONDS above 0), else null. */
    holdExpiry: HoldExpiry | null;
  }
}

export default fp(
  async (app) => {
    app.decorate("retention", null);
    app.decorate("holdExpiry", null);
    app.addHook("onReady", async () => {
      const s = app.settings.retention;
      if (app.pool && s.holdExpirySeconds > 0) {
        app.holdExpiry = startHoldExpiry(app.pool, {
          expirySeconds: s.holdExpirySeconds,
          intervalMs: s.holdSweepIntervalMs,
          clock: () => app.clock(),
          log: app.log.child({ component: "hold-expiry" }),
          isReady: () => app.schemaReady(),
        });
      }
      if (!app.pool || s.intervalMs === 0) return;
      app.retention = startRetention(
        app.pool,
        { decisionDays: s.decisionDays, webhookDays: s.webhookDays },
        {
          intervalMs: s.intervalMs,
          registry: app.metrics.registry,
          log: app.log.child({ component: "retention" }),
          isReady: () => app.schemaReady(),
        },
      );
    });
    app.addHook("preClose", async () => {
      await app.holdExpiry?.stop();
      app.holdExpiry = null;
      await app.retention?.stop();
      app.retention = null;
    });
  },
  { name: "writ-retention", dependencies: ["writ-db", "writ-metrics"] },
);
