/**
 * `POST /v1/admin/seed-demo` (admin bearer): inserts the public demo organizations, their
 * public keys, the demo agent and the demo delegation with its agreement (./seed-demo.ts,
 * docs/demo.md).
 *
 * Checks, in order (before the body is read): a bearer (401 `bearer token required`), the
 * admin token (403 `admin token required`; 503 while BUR_ADMIN_TOKEN is unset), then the flag
 * (403 `demo seed is disabled` unless BUR_ALLOW_DEMO_SEED=1; checked after the credential so
 * that nobody without the admin token learns how the service is configured), then storage and
 * the log signing key (503). Answers 200 `{operator_key, wallet_key, merchant_key, agent_id,
 * agreement_id, already_present}` with `Cache-Control: no-store`; `already_present` is a JSON
 * boolean (the spec's sample shows it as a string). The admin token is never echoed.
 */
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { ApiError, errorResponses } from "../../errors.js";
import { logAppendOptions, logSignerOf } from "../shared/registry-log.js";
import { seedDemo } from "./seed-demo.js";

const adminRoutes: FastifyPluginAsync = async (app) => {
  const adminThenFlag = async (request: FastifyRequest): Promise<void> => {
    await app.requireAdmin(request);
    if (!app.settings.allowDemoSeed) throw new ApiError("DEMO_SEED_DISABLED");
  };

  app.post(
    "/v1/admin/seed-demo",
    {
      schema: {
        tags: ["admin"],
        summary: "Insert the public demo organizations, keys, agent and agreement (admin token; BUR_ALLOW_DEMO_SEED=1)",
        description: "Idempotent: a second call inserts nothing and answers already_present true. The three keys are PUBLIC demo keys (docs/demo.md).",
        response: {
          200: {
            type: "object",
            required: ["operator_key", "wallet_key", "merchant_key", "agent_id", "agreement_id", "already_present"],
            properties: {
              operator_key: { type: "string" },
              wallet_key: { type: "string" },
              merchant_key: { type: "string" },
              agent_id: { type: "string" },
              agreement_id: { type: "string" },
              already_present: { type: "boolean" },
            },
          },
          ...errorResponses(401, 403, 500, 503),
        },
      },
      onRequest: adminThenFlag,
    },
    async (request, reply) => {
      const pool = app.requireDb();
      const signer = logSignerOf(app);
      const now = app.clock();
      const out = await seedDemo(pool, { now, signer, logOptions: logAppendOptions(app, now) });
      request.log.info({ already_present: out.already_present }, "demo data seeded");
      void reply.header("cache-control", "no-store");
      return out;
    },
  );
};

export default adminRoutes;
