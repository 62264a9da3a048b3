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
 * see push.ts for the payload binding), the signed body's shape (400). Then, in ONE
 * transaction: a repeat (same `revocation_id = hashOf(revocation)`) answers 200 `{stored:
 * false, revocation_id}` with nothing appended; otherwise the PRINCIPAL's signature is checked
 * against the stored agreement (row locked FOR SHARE): an agreement this service does not hold
 * is 404 `agreement was not found`, a revocation that does not verify with the principal key
 * all its live mandates name, or does not cover every live mandate hash, is 422 `principal
 * revocation did not verify: <why>`; both store and publish nothing (docs/verify.md,
 * "Revocation pushes"). A verified revocation is stored, appended to the transparency log and
 * NOTIFYd: 200 `{stored: true, revocation_id, sequence}`.
 */
import { LARGE_BODY_LIMIT } from "../../body-shape.js";
import type { FastifyPluginAsync } from "fastify";
import { verifyRevocation, type AgreementRevocation } from "../../../core/agreement/index.js";
import { hashOf } from "../../../core/canonical/index.js";
import { lockAgreementByMandate, listRevocations, MAX_PAGE, recordRevocation, type BeforeInsert } from "../../../store/index.js";
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

/** The check of a new pushed revocation against the stored agreement (see the module comment). */
function principalRevocationCheck(revocation: AgreementRevocation): BeforeInsert {
  return async (client) => {
    // The mandate hash names the agreement among those of several organizations under the id.
    const stored = await lockAgreementByMandate(client, revocation.agreement_id, revocation.mandate_hash);
    if (stored === undefined) throw new ApiError("AGREEMENT_NOT_FOUND");
    const record = stored.record;
    const state = await verifyRevocation({ agreement_id: record.agreement_id, mandates: record.mandates, revocation });
    if (state !== "valid")
      throw new ApiError("REVOCATION_NOT_VERIFIED", `principal revocation did not verify: ${state === "none" ? "no revocation" : state.problem}`);
    return { agentId: stored.agentId, orgId: stored.orgId };
  };
}

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
      const pool = app.requireReadDb();
      const revocations = await listRevocations(pool, request.query.after ?? 0, request.query.limit ?? MAX_PAGE);
      return reply.header("cache-control", "public, max-age=300").send({ revocations });
    },
  );

  app.post<{ Body: Record<string, unknown> }>(
    "/v1/revocations/push",
    {
      bodyLimit: LARGE_BODY_LIMIT,
      schema: {
        tags: ["revocations"],
        summary: "Notifier-signed revocation push",
        description:
          'Body {at, svc_revocation_push: "1", revocation, signature}. signature is a flattened JWS by the notifier key, ' +
          "typ svc-revocation-push+jws, whose payload is the RFC 8785 canonical JSON of the body without signature. " +
          "revocation.signature is the principal's (typ svc-revocation+jws), checked against the stored agreement: " +
          "404 for an agreement this service does not hold, 422 when it does not verify or does not cover every live mandate hash.",
        body: { type: "object" },
        response: {
          200: {
            type: "object",
            properties: { stored: { type: "boolean" }, revocation_id: { type: "string" }, sequence: { type: "integer" } },
          },
          ...errorResponses(400, 401, 404, 422, 503),
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
        principalRevocationCheck(push.revocation),
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
