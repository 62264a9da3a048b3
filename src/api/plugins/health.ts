/**
 * Liveness and readiness: `GET /healthz` is always 200 `{status: "ok"}` while the process
 * serves; `GET /readyz` is 200 `{status: "ok", database}` when the database answers (or is not
 * configured: `database: "not configured"`), 503 `{error: "database unavailable"}` when it is
 * configured but unreachable or not yet migrated, and 503 `{error: "revocation index not loaded
 * yet"}` until the verify path's revocation index has first loaded (and the Kubernetes watch,
 * when it runs, first synced): before that every verify would step up. Afterwards, 503
 * `{error: "revocation state is stale: ..."}` while neither the Kubernetes watch nor the
 * controller's path is fresh (every verify steps up, so traffic should go to a replica that can
 * decide), and 200 `{status: "degraded", database: "ok", revocations: <why>}` while verify
 * decides on the controller's path with its own watch down.
 */
import fp from "fastify-plugin";
import { ping } from "../../store/index.js";
import { API_ERRORS, ERROR_BODY_SCHEMA } from "../errors.js";

const READY_TIMEOUT_MS = 2000;
const statusSchema = {
  type: "object",
  properties: { status: { type: "string" }, database: { type: "string" }, revocations: { type: "string" } },
} as const;

async function pingWithin(ping: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      ping.then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export default fp(
  async (app) => {
    app.get("/healthz", { schema: { tags: ["health"], summary: "Liveness", response: { 200: statusSchema } } }, async () => ({ status: "ok" }));
    app.get(
      "/readyz",
      { schema: { tags: ["health"], summary: "Readiness", response: { 200: statusSchema, 503: ERROR_BODY_SCHEMA } } },
      async (_request, reply) => {
        const pool = app.pool;
        if (pool === null) return { status: "ok", database: "not configured" };
        if (!app.schemaReady() || !(await pingWithin(ping(pool), READY_TIMEOUT_MS))) {
          return reply.code(503).send({ error: API_ERRORS.DATABASE_UNAVAILABLE.message });
        }
        const runtime = app.verifyRuntime;
        if (runtime && !runtime.everFresh()) return reply.code(503).send({ error: API_ERRORS.REVOCATIONS_NOT_LOADED.message });
        const f = runtime?.freshness();
        if (f?.stale) return reply.code(503).send({ error: `${API_ERRORS.REVOCATIONS_STALE.message}: ${f.detail ?? "no reason known"}` });
        if (f && f.via !== "watch") return { status: "degraded", database: "ok", revocations: f.detail ?? f.via ?? "" };
        return { status: "ok", database: "ok" };
      },
    );
  },
  { name: "writ-health", dependencies: ["writ-db"] },
);
