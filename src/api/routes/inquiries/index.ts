/**
 * `POST /v1/inquiries` (scope inquiries:write): a purpose-coded inquiry about an agent.
 *
 * Answer 200: `{inquiry_id, purpose_code, at, agent: {agent_id, status, verification_level},
 * trust_score: {score, cold_start, reasons: [{code, points}]}, identity: {fingerprint,
 * registered_at, operator_org_id}, verification: {level}, active_authorizations, revocations,
 * incidents}`, plus `recent_evidence_hashes` (the 10 newest evidence hashes of all reports on
 * the agent) when the asking organization is a contributor: it has filed a report on the agent
 * AND is a payment-side party of one of the agent's agreements (src/core/registry/
 * reporters.ts). `incidents` counts organizations that reported a fraud incident. Never an
 * e-mail address or a principal_id. Every answered inquiry is recorded (who, why, when).
 *
 * Refusals: purpose_code missing (`purpose_code is required`) or unknown 400; unknown agent 404.
 */
import type { FastifyPluginAsync } from "fastify";
import {
  paymentParties,
  agreementsAcknowledgedBy,
  getAgent,
  agreementFacts,
  standingFrom,
  recordInquiry,
  type Queryable,
  recentEvidenceHashes,
  reportKindsByOrg,
} from "../../../store/index.js";
import { AGENT_ID_PATTERN, PURPOSE_CODES, RECENT_EVIDENCE_LIMIT, countReporters, isContributor, type PurposeCode } from "../../../core/registry/index.js";
import { keyCredential } from "../../plugins/auth.js";
import { ApiError, errorResponses } from "../../errors.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";

const inquiryAnswerSchema = {
  type: "object",
  required: ["inquiry_id", "purpose_code", "at", "agent", "trust_score", "identity", "verification", "active_authorizations", "revocations", "incidents"],
  properties: {
    inquiry_id: { type: "string", pattern: "^inq_[0-9a-f]{24}$" },
    purpose_code: { type: "string", enum: [...PURPOSE_CODES] },
    at: { type: "string", format: "date-time" },
    agent: {
      type: "object",
      required: ["agent_id", "status", "verification_level"],
      properties: { agent_id: { type: "string" }, status: { type: "string" }, verification_level: { type: "string" } },
    },
    trust_score: {
      type: "object",
      required: ["score", "cold_start", "reasons"],
      properties: {
        score: { type: "integer", minimum: 0, maximum: 1000 },
        cold_start: { type: "boolean" },
        reasons: {
          type: "array",
          items: { type: "object", required: ["code", "points"], properties: { code: { type: "string" }, points: { type: "integer" } } },
        },
      },
    },
    identity: {
      type: "object",
      required: ["fingerprint", "registered_at", "operator_org_id"],
      properties: { fingerprint: { type: "string" }, registered_at: { type: "string", format: "date-time" }, operator_org_id: { type: "string" } },
    },
    verification: { type: "object", required: ["level"], properties: { level: { type: "string" } } },
    active_authorizations: { type: "integer", minimum: 0 },
    revocations: { type: "integer", minimum: 0 },
    incidents: { type: "integer", minimum: 0 },
    recent_evidence_hashes: {
      type: "array",
      items: { type: "string" },
      description: `Only for contributors (organizations that filed a report on the agent and are a payment-side party of one of its agreements): the ${RECENT_EVIDENCE_LIMIT} newest evidence hashes`,
    },
  },
} as const;

/** True when organization `orgId` is a verified payment-side party of one of agent `agentId`'s agreements. */
async function isPaymentPartyOf(q: Queryable, agentId: string, orgId: string): Promise<boolean> {
  for (const record of await agreementsAcknowledgedBy(q, agentId, orgId)) {
    if ((await paymentParties(q, record)).has(orgId)) return true;
  }
  return false;
}

const inquiryRoutes: FastifyPluginAsync = async (app) => {
  app.post<{ Body: { agent_id: string; purpose_code: PurposeCode } }>(
    "/v1/inquiries",
    {
      schema: {
        tags: ["registry"],
        summary: "Purpose-coded inquiry about an agent (scope inquiries:write)",
        body: {
          type: "object",
          required: ["agent_id", "purpose_code"],
          properties: { agent_id: { type: "string", pattern: AGENT_ID_PATTERN }, purpose_code: { type: "string", enum: [...PURPOSE_CODES] } },
        },
        response: {
          200: inquiryAnswerSchema,
          ...errorResponses(400, 401, 403, 404, 503),
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireScope("inquiries:write"),
    },
    async (request) => {
      const credential = keyCredential(request);
      const pool = app.requireDb();
      const now = app.clock();
      const agent = await getAgent(pool, request.body.agent_id);
      if (!agent) throw new ApiError("AGENT_NOT_FOUND");
      const [kindsByOrg, facts] = await Promise.all([reportKindsByOrg(pool, agent.agent_id), agreementFacts(pool, agent.agent_id)]);
      const standing = standingFrom(agent, countReporters(kindsByOrg.values()), facts, now);
      const reported = kindsByOrg.has(credential.org_id);
      const contributor = isContributor(reported, reported && (await isPaymentPartyOf(pool, agent.agent_id, credential.org_id)));
      const evidence = contributor ? await recentEvidenceHashes(pool, agent.agent_id, RECENT_EVIDENCE_LIMIT) : undefined;
      const inquiry = await recordInquiry(
        pool,
        { org_id: credential.org_id, key_id: credential.key_id, agent_id: agent.agent_id, purpose_code: request.body.purpose_code },
        now,
      );
      return {
        inquiry_id: inquiry.inquiry_id,
        purpose_code: request.body.purpose_code,
        at: inquiry.created_at,
        agent: { agent_id: agent.agent_id, status: agent.status, verification_level: agent.verification_level },
        trust_score: standing.trust_score,
        identity: { fingerprint: agent.fingerprint, registered_at: agent.registered_at.toISOString(), operator_org_id: agent.org_id },
        verification: { level: agent.verification_level },
        active_authorizations: standing.active_authorizations,
        revocations: standing.revocations,
        incidents: standing.incidents,
        ...(evidence !== undefined ? { recent_evidence_hashes: evidence } : {}),
      };
    },
  );
};

export default inquiryRoutes;
