/**
 * `POST /v1/mandates`: records a presented AP2 open payment mandate as delegation evidence for
 * a registered agent (docs/mandates.md).
 *
 * Request `{agent_id, sd_jwt, nonce?, audience?}` with an organization key holding
 * `agents:write` of the agent's operator (another operator's agent: 403; unknown: 404). The
 * SD-JWT is verified (src/core/mandates): issued by a trusted issuer key (registered by an
 * active wallet organization, `POST /v1/orgs/{org_id}/issuer-keys`), every disclosure present
 * and matching its digest, the key-binding JWT signed by the key in `cnf` for `audience`
 * (default WRIT_MANDATE_AUDIENCE) with `nonce` (when given) and fresh (WRIT_MANDATE_KB_MAX_AGE_SECONDS),
 * `cnf` the agent's registered key; then its claims are imported (exp required and in the
 * future, every constraint mapped or refused). A refusal is 400 `{error: "mandate refused:
 * <CODE>: <why>"}`.
 *
 * Recorded in one transaction: the delegation, the agreement row holding its ledger, the
 * mandate row and one transparency log entry (kind `agreement`, body `{agreement_id,
 * delegation_id, mandate_hashes: [<sha256 of the issuer-signed JWT>], evidence}`). Answer 201
 * `{delegation_id, agreement_id, agent_id, expires_at, issuer_kid, created: true, revoked}`;
 * the same mandate again is 200 with `created: false` and nothing written. Verify then
 * evaluates the agent's actions against the delegation like any other.
 */
import { SMALL_BODY_LIMIT } from "../../body-shape.js";
import type { FastifyPluginAsync } from "fastify";
import { MAX_SD_JWT_LENGTH } from "../../../core/mandates/index.js";
import { getAgent } from "../../../store/index.js";
import { checkPresentedMandate, recordAcceptedMandate, refusalText } from "../../../verify/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { keyCredential } from "../../plugins/auth.js";
import { logAppendOptions, logSignerOf } from "../shared/registry-log.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { textSchema } from "../../../core/schemas/index.js";

interface Body {
  agent_id: string;
  sd_jwt: string;
  nonce?: string;
  audience?: string;
}

const answerSchema = {
  type: "object",
  required: ["delegation_id", "agreement_id", "agent_id", "expires_at", "issuer_kid", "created", "revoked"],
  properties: {
    delegation_id: { type: "string" },
    agreement_id: { type: "string" },
    agent_id: { type: "string" },
    expires_at: { type: "string", format: "date-time" },
    issuer_kid: { type: "string" },
    created: { type: "boolean" },
    revoked: { type: "boolean" },
  },
} as const;

const mandateRoutes: FastifyPluginAsync = async (app) => {
  app.post<{ Body: Body }>(
    "/v1/mandates",
    {
      // An SD-JWT of up to 65,536 characters and a few short members.
      bodyLimit: 2 * SMALL_BODY_LIMIT,
      schema: {
        tags: ["verify"],
        summary: "Record a verified AP2 open payment mandate (SD-JWT) as a delegation of a registered agent",
        description: "Authorization: an agents:write key of the agent's operator. See docs/mandates.md.",
        body: {
          type: "object",
          required: ["agent_id", "sd_jwt"],
          properties: {
            agent_id: textSchema({ minLength: 1, maxLength: 256 }),
            sd_jwt: { type: "string", minLength: 1, maxLength: MAX_SD_JWT_LENGTH, pattern: "^[A-Za-z0-9_.~-]+$" },
            nonce: textSchema({ minLength: 1, maxLength: 256 }),
            audience: textSchema({ minLength: 1, maxLength: 512 }),
          },
        },
        response: { 200: answerSchema, 201: answerSchema, ...errorResponses(400, 401, 403, 404, 500, 503) },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireScope("agents:write"),
    },
    async (request, reply) => {
      const credential = keyCredential(request);
      const pool = app.requireDb();
      const { agent_id: agentId, sd_jwt: text } = request.body;
      const agent = await getAgent(pool, agentId);
      if (!agent) throw new ApiError("AGENT_NOT_FOUND");
      if (agent.org_id !== credential.org_id) throw new ApiError("AGENT_NOT_OWNED");
      const signer = logSignerOf(app);
      const now = app.clock();
      const settings = app.settings.mandates;
      const presented = {
        sdJwt: text,
        agent,
        audience: request.body.audience ?? settings.audience,
        kbMaxAgeMs: settings.kbMaxAgeMs,
        now,
        ...(request.body.nonce !== undefined ? { nonce: request.body.nonce } : {}),
      };
      const checked = await checkPresentedMandate(pool, presented);
      if (!checked.ok) {
        request.log.info({ agent_id: agentId, refusals: checked.refusals.map((r) => r.code) }, "mandate refused");
        throw new ApiError("MANDATE_REFUSED", refusalText(checked.refusals));
      }
      const issuer = checked.accepted.verification.issuer;
      const recorded = await recordAcceptedMandate(
        pool,
        checked.accepted,
        { sdJwt: text, now, orgId: credential.org_id },
        { signer, options: logAppendOptions(app, now) },
      );
      // This process answers verify from its snapshot of the agent: drop it (others: the change notice).
      app.verifyRuntime?.candidates.forget(agentId);
      request.log.info({ agent_id: agentId, delegation_id: recorded.delegationId, created: recorded.created, issuer_kid: issuer.kid }, "mandate recorded");
      return reply.code(recorded.created ? 201 : 200).send({
        delegation_id: recorded.delegationId,
        agreement_id: recorded.agreementId,
        agent_id: agentId,
        expires_at: recorded.expiresAt,
        issuer_kid: issuer.kid,
        created: recorded.created,
        revoked: recorded.revoked,
      });
    },
  );
};

export default mandateRoutes;
