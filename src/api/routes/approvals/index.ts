/**
 * Approvals of a STEP_UP (issue 32, docs/reference/approvals.md):
 *
 * - `GET /v1/approvals/{approval_id}` (scope `verify`, the agent's operator): the approval's
 *   content and state, for the agent to poll. Another organization's approval: 404, as unknown.
 * - `POST /v1/approvals/{approval_id}/decision` `{decision, signature}`: the principal's
 *   decision signed with the grant principal's key (`writ approval sign`): a flattened JWS,
 *   `typ` `writ-approval+jws`, EdDSA or ES256, whose payload is exactly the RFC 8785 canonical
 *   bytes of the approval's content plus `decision`. The signature is the credential.
 * - the portal's passkey routes (./portal.ts).
 *
 * A decision is taken once, before `expires_at`; it is stored with its evidence (the JWS, or
 * the WebAuthn assertion) and appended to the transparency log as an `agreement` entry
 * `{event: "approval", ...}` in the same transaction (503 without SVC_LOG_SIGNING_SEED).
 */
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { approvalStatus, APPROVAL_TYP, decisionPayload, type ApprovalDecision } from "../../../core/approvals/index.js";
import { canonicalBytes, sha256Hash } from "../../../core/canonical/index.js";
import { JoseError, keyId, verifySignedRecord } from "../../../core/jose/index.js";
import { decideApproval, findApproval, type DecisionEvidence, type StoredApproval } from "../../../store/approvals.js";
import { appendLogEntries } from "../../../store/log.js";
import { withTransaction } from "../../../store/pool.js";
import type { ApprovalOptions } from "../../../verify/approvals.js";
import { ApiError, errorResponses } from "../../errors.js";
import { keyCredential } from "../../plugins/auth.js";
import { logAppendOptions, logSignerOf } from "../agents/registry-log.js";
import { registrySchemaErrors } from "../orgs/schema-errors.js";
import { listeningBaseUrl } from "../portal/magic-link.js";
import { registerApprovalPages } from "./pages.js";
import { registerPortalApprovals } from "./portal.js";

/** The page where the principal decides (`#<approval_id>` names the approval). */
export const APPROVALS_PAGE = "/portal/approvals";

/** The service's public base URL (WRIT_PUBLIC_BASE_URL), else `http://localhost:<port>` for a loopback listener (WebAuthn needs a host name). */
export function principalBaseUrl(app: FastifyInstance): string {
  const set = app.settings.portal.publicBaseUrl;
  if (set !== null) return set;
  return listeningBaseUrl(app.server.address()).replace(/^http:\/\/(127\.0\.0\.1|\[::1\])(?=[:/]|$)/, "http://localhost");
}

/** What verify needs to open approvals (the verify route passes it). */
export function approvalOptionsOf(app: FastifyInstance): ApprovalOptions {
  return { ttlSeconds: app.settings.portal.approvalTtlSeconds, urlOf: (id) => `${principalBaseUrl(app)}${APPROVALS_PAGE}#${id}` };
}

const str = { type: "string" } as const;

/** The JSON schema of an approval's answer. */
export const APPROVAL_SCHEMA = {
  type: "object",
  required: ["approval_id", "status", "agent_id", "agreement_id", "action_id", "request_hash", "amount", "currency", "confirmation_text", "reasons", "created_at", "expires_at", "approval_url", "content"],
  properties: {
    approval_id: str,
    status: { type: "string", enum: ["pending", "approved", "declined", "expired"] },
    agent_id: str,
    agreement_id: str,
    action_id: str,
    request_hash: str,
    amount: { type: "number" },
    currency: str,
    merchant: str,
    confirmation_text: str,
    reasons: { type: "array", items: str },
    created_at: { type: "string", format: "date-time" },
    expires_at: { type: "string", format: "date-time" },
    decided_at: { type: ["string", "null"], format: "date-time" },
    decided_with: { type: ["object", "null"], properties: { method: str, key_id: str }, description: "How the decision was signed: passkey (credential id) or principal_key (kid)" },
    used: { type: "boolean", description: "The approved request's retry was ALLOWed (an approval is used once)" },
    approval_url: str,
    content: { type: "object", additionalProperties: true, description: "What a decision signs (with `decision`): see docs/reference/approvals.md" },
  },
} as const;

/** The body of an approval at `now`. */
export function approvalBody(app: FastifyInstance, a: StoredApproval, now: Date): Record<string, unknown> {
  const c = a.content;
  return {
    approval_id: a.approvalId,
    status: approvalStatus(a.status, a.expiresAt.getTime(), now.getTime()),
    agent_id: a.agentId,
    agreement_id: a.agreementId,
    action_id: a.actionId,
    request_hash: a.requestHash,
    amount: c.amount,
    currency: c.currency,
    ...(c.merchant !== undefined ? { merchant: c.merchant } : {}),
    confirmation_text: c.confirmation_text,
    reasons: c.reasons,
    created_at: a.createdAt.toISOString(),
    expires_at: c.expires_at,
    decided_at: a.decidedAt?.toISOString() ?? null,
    decided_with: a.decidedWith ? { method: a.decidedWith.method, key_id: a.decidedWith.key_id } : null,
    used: a.usedAt !== null,
    approval_url: approvalOptionsOf(app).urlOf(a.approvalId),
    content: c,
  };
}

/**
 * Records a decision and its transparency-log entry in one transaction; the decided approval.
 * Throws APPROVAL_NOT_PENDING when it was decided already or expired.
 */
export async function recordDecision(app: FastifyInstance, a: StoredApproval, decision: ApprovalDecision, evidence: DecisionEvidence): Promise<{ approval: StoredApproval; logSequence: number }> {
  const signer = logSignerOf(app);
  const now = app.clock();
  const pool = app.requireDb();
  return withTransaction(pool, async (client) => {
    const decided = await decideApproval(client, a.approvalId, decision, evidence, now);
    if (!decided) throw new ApiError("APPROVAL_NOT_PENDING", `approval ${a.approvalId} is ${approvalStatus(a.status, a.expiresAt.getTime(), now.getTime())}: it can no longer be decided`);
    const body = {
      event: "approval",
      decision: decided.status,
      approval_id: a.approvalId,
      agreement_id: a.agreementId,
      agent_id: a.agentId,
      action_id: a.actionId,
      request_hash: a.requestHash,
      content_hash: sha256Hash(canonicalBytes(decisionPayload(a.content, decision))),
      confirmation_text: a.content.confirmation_text,
      method: evidence.method,
      key_id: evidence.key_id,
      at: now.toISOString(),
    };
    const logged = await appendLogEntries(client, [{ kind: "agreement", body }], signer, logAppendOptions(app, now));
    return { approval: decided, logSequence: logged.entries[0]?.sequence ?? 0 };
  });
}

/** An approval that exists, or the 404. */
export async function requireApproval(app: FastifyInstance, id: string): Promise<StoredApproval> {
  const a = await findApproval(app.requireDb(), id);
  if (!a) throw new ApiError("APPROVAL_NOT_FOUND");
  return a;
}

const ID_PARAMS = { type: "object", required: ["approval_id"], properties: { approval_id: { type: "string", pattern: "^apr_[0-9a-f]{24}$" } } } as const;

const approvalRoutes: FastifyPluginAsync = async (app) => {
  app.get<{ Params: { approval_id: string } }>(
    "/v1/approvals/:approval_id",
    {
      schema: {
        tags: ["verify"],
        summary: "An approval a STEP_UP opened, for the agent to poll (scope verify, the agent's operator)",
        params: ID_PARAMS,
        response: { 200: APPROVAL_SCHEMA, ...errorResponses(400, 401, 403, 404, 503) },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireScope("verify"),
    },
    async (request, reply) => {
      const credential = keyCredential(request);
      const a = await findApproval(app.requireDb(), request.params.approval_id);
      if (!a || a.orgId !== credential.org_id) throw new ApiError("APPROVAL_NOT_FOUND");
      void reply.header("cache-control", "no-store");
      return approvalBody(app, a, app.clock());
    },
  );

  app.post<{ Params: { approval_id: string }; Body: { decision: ApprovalDecision; signature: unknown } }>(
    "/v1/approvals/:approval_id/decision",
    {
      schema: {
        tags: ["verify"],
        summary: "The principal approves or declines, signed with the grant principal's key (writ approval sign)",
        description: `A flattened JWS (typ ${APPROVAL_TYP}, EdDSA or ES256) whose payload is exactly the canonical bytes of the approval's content plus decision. Verified with the public key the grant names for its principal.`,
        params: ID_PARAMS,
        body: {
          type: "object",
          required: ["decision", "signature"],
          properties: { decision: { type: "string", enum: ["approve", "decline"] }, signature: { type: "object" } },
        },
        response: { 200: { ...APPROVAL_SCHEMA, properties: { ...APPROVAL_SCHEMA.properties, log_sequence: { type: "integer" } } }, ...errorResponses(400, 401, 404, 409, 500, 503) },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request) => {
      const a = await requireApproval(app, request.params.approval_id);
      const { decision, signature } = request.body;
      if (a.principalKeys.length === 0) throw new ApiError("APPROVAL_NOT_VERIFIED", `the grant of approval ${a.approvalId} names no principal key: approve it with a passkey in the portal`);
      let kid: string;
      try {
        const v = await verifySignedRecord(signature, a.principalKeys, { typ: APPROVAL_TYP, record: decisionPayload(a.content, decision) });
        kid = keyId(v.key);
      } catch (e) {
        if (e instanceof JoseError) throw new ApiError("APPROVAL_NOT_VERIFIED", `approval signature did not verify: ${e.message}`);
        throw e;
      }
      const r = await recordDecision(app, a, decision, { method: "principal_key", key_id: kid, proof: { signature } });
      request.log.info({ approval_id: a.approvalId, decision, kid }, "approval decided with the principal's key");
      return { ...approvalBody(app, r.approval, app.clock()), log_sequence: r.logSequence };
    },
  );

  registerPortalApprovals(app);
  registerApprovalPages(app, APPROVALS_PAGE);
};

export default approvalRoutes;
