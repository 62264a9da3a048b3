/**
 * Runs the retention worker with the data-plane app: started when the app is ready (only with
 * a database and WRIT_RETENTION_INTERVAL_MS above 0), stopped in `preClose`, before the pool
 * ends. Exposes it as `app.retention` (null when off) for tests and operators' scripts.
 */
import fp from "fastify-plugin";
import { startRetention, type RetentionWorker } from "./worker.js";

declare module "fastify" {
  interface FastifyInstance {
    retention: RetentionWorker | null;
  }
}

export default fp(
  async (app) => {
    app.decorate("retention", null);
    app.addHook("onReady", async () => {
      const s = app.settings.retention;
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
      await app.retention?.stop();
      app.retention = null;
    });
  },
  { name: "writ-retention", dependencies: ["writ-db", "writ-metrics"] },
);
