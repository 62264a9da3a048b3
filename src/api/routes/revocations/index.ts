/**
 * The revocation feed: `GET /v1/revocations` (the pull list) and `POST /v1/revocations/push`
 * (the notifier-signed webhook).
 *
 * Pull list: `{revocations: [{sequence, revocation_id, received_at, revocation}]}` in sequence
 * order, `Cache-Control: public, max-age=300`. Resumable: `?after=<sequence>` returns only later
 * entries, `?limit=` (default and cap 1000) bounds a page; a follower asks again with the last
 * sequence it saw until a page comes back shorter than its limit.
 *
 * Push: checks, in order, the settings (503 naming the unset one, before the body is read), the
 * body is a JSON object (400), the notifier signature (401 `revocation push did not verify`,
 * see push.ts for the payload binding), the signed body's shape (400). Then it stores the
 * revocation with `revocation_id = hashOf(revocation)`, appends it to the transparency log and
 * NOTIFYs, in one transaction: 200 `{stored: true, revocation_id, sequence}`, or for a repeat
 * 200 `{stored: false, revocation_id}` with nothing appended.
 */
import type { FastifyPluginAsync } from "fastify";
import { hashOf } from "../../../core/canonical/index.js";
import { listRevocations, MAX_PAGE, recordRevocation } from "../../../store/revocations.js";
import { ApiError, settingNotSet, errorResponses } from "../../errors.js";
import { parsePushBody, verifyPushSignature } from "./push.js";

const storedRevocationSchema = {
  type: "object",
  properties: {
    sequence: { type: "integer" },
    revocation_id: { type: "string" },
    received_at: { type: "string", format: "date-time" },
    revocation: { type: "object", additionalProperties: true },
  },
} as const;

interface ListQuery {
  after?: number;
  limit?: number;
}

const revocationRoutes: FastifyPluginAsync = async (app) => {
  const { settings } = app;
  // The same checkpoint origin the log area signs with (omitted when WRIT_LOG_ORIGIN is invalid).
  const origin = settings.checkpointOrigin ?? undefined;

  app.get<{ Querystring: ListQuery }>(
    "/v1/revocations",
    {
      schema: {
        tags: ["revocations"],
        summary: "Pull list of stored principal revocations",
        querystring: {
          type: "object",
          properties: {
            after: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "Return entries after this sequence" },
            limit: { type: "integer", minimum: 1, description: `Page size (capped at ${MAX_PAGE})` },
          },
        },
        response: {
          200: { type: "object", required: ["revocations"], properties: { revocations: { type: "array", items: storedRevocationSchema } } },
          ...errorResponses(400, 503),
        },
      },
    },
    async (request, reply) => {
      const pool = app.requireDb();
      const revocations = await listRevocations(pool, request.query.after ?? 0, request.query.limit ?? MAX_PAGE);
      return reply.header("cache-control", "public, max-age=300").send({ revocations });
    },
  );

  app.post<{ Body: Record<string, unknown> }>(
    "/v1/revocations/push",
    {
      schema: {
        tags: ["revocations"],
        summary: "Notifier-signed revocation push",
        description:
          "Body {at, svc_revocation_push: \"1\", revocation, signature}. signature is a flattened JWS by the notifier key, " +
          "typ svc-revocation-push+jws, whose payload is the RFC 8785 canonical JSON of the body without signature.",
        body: { type: "object" },
        response: {
          200: {
            type: "object",
            properties: { stored: { type: "boolean" }, revocation_id: { type: "string" }, sequence: { type: "integer" } },
          },
          ...errorResponses(400, 401, 503),
        },
      },
      // Settings are checked before the body is read: an unconfigured service answers 503.
      onRequest: async () => {
        if (settings.pushNotifierJwk.status === "unset") throw settingNotSet("SVC_PUSH_NOTIFIER_JWK");
        if (settings.pushNotifierJwk.status === "invalid") throw new ApiError("KEY_LOAD_FAILED", "SVC_PUSH_NOTIFIER_JWK failed to load");
        if (settings.logSigner.status === "unset") throw settingNotSet("SVC_LOG_SIGNING_SEED");
        if (settings.logSigner.status === "invalid") throw new ApiError("KEY_LOAD_FAILED", "SVC_LOG_SIGNING_SEED failed to load");
        app.requireDb();
      },
    },
    async (request) => {
      const notifier = settings.pushNotifierJwk.status === "loaded" ? settings.pushNotifierJwk.value : null;
      const signer = app.logSigner;
      if (!notifier || !signer) throw new ApiError("INTERNAL");
      const body = request.body;
      await verifyPushSignature(body, notifier);
      const push = parsePushBody(body);
      const revocationId = hashOf(push.revocation);
      const out = await recordRevocation(
        app.requireDb(),
        { revocation: push.revocation, revocationId, pushedAt: push.at },
        (client) => app.revocationLog(client, push.revocation, signer, { now: app.clock(), ...(origin !== undefined ? { origin } : {}) }),
      );
      if (out.stored) {
        request.log.info({ revocation_id: out.revocation_id, sequence: out.sequence }, "revocation stored");
        return { stored: true, revocation_id: out.revocation_id, sequence: out.sequence };
      }
      return { stored: false, revocation_id: out.revocation_id };
    },
  );
};

export default revocationRoutes;
