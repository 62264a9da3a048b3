/**
 * The transparency log area: append (`POST /v1/log/entries`, batched, see ./batcher.ts), entries
 * and inclusion proofs (./entries.ts), the signed head, its checkpoint and consistency proofs
 * (./tree.ts). Storage: src/store/log.ts (appends) and src/store/log-read.ts (reads).
 *
 * Metric: `writ_log_append_batch_size`, the number of appends written per signed head.
 */
import type { FastifyPluginAsync } from "fastify";
import { Histogram } from "prom-client";
import { appendToLog } from "../../../store/index.js";
import { ApiError } from "../../errors.js";
import { registerAppendRoute } from "./append.js";
import { appendQueue } from "./batcher.js";
import { registerEntryRoutes } from "./entries.js";
import { registerTreeRoutes } from "./tree.js";

const logRoutes: FastifyPluginAsync = async (app) => {
  const batchSize = new Histogram({
    name: "writ_log_append_batch_size",
    help: "Appends written together under one signed tree head.",
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
    registers: [app.metrics.registry],
  });
  const origin = app.settings.checkpointOrigin ?? undefined;
  if (origin === undefined) app.log.warn({ origin: app.settings.logOrigin }, "WRIT_LOG_ORIGIN is not a valid checkpoint origin");
  const batcher = appendQueue(
    async (inputs) => {
      const signer = app.logSigner;
      if (signer === null) throw new ApiError("INTERNAL");
      return appendToLog(app.requireDb(), inputs, signer, { now: app.clock(), ...(origin !== undefined ? { origin } : {}) });
    },
    undefined,
    (size) => batchSize.observe(size),
  );
  app.addHook("onClose", async () => batcher.drain());

  registerAppendRoute(app, batcher);
  registerEntryRoutes(app);
  registerTreeRoutes(app);
};

export default logRoutes;
