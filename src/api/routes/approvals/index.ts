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
import type { FastifyPluginAsync } from "fastify";
import { APPROVAL_TYP, decisionPayload, type ApprovalDecision } from "../../../core/approvals/index.js";
import { JoseError, keyId, verifySignedRecord } from "../../../core/jose/index.js";
import { findApproval } from "../../../store/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { keyCredential } from "../../plugins/auth.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { registerApprovalPages } from "./pages.js";
import { registerPortalApprovals } from "./portal.js";
import { approvalBody, APPROVAL_SCHEMA, APPROVALS_PAGE, recordDecision, requireApproval } from "./approval.js";

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
        response: {
          200: { ...APPROVAL_SCHEMA, properties: { ...APPROVAL_SCHEMA.properties, log_sequence: { type: "integer" } } },
          ...errorResponses(400, 401, 404, 409, 500, 503),
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request) => {
      const a = await requireApproval(app, request.params.approval_id);
      const { decision, signature } = request.body;
      if (a.principalKeys.length === 0)
        throw new ApiError("APPROVAL_NOT_VERIFIED", `the grant of approval ${a.approvalId} names no principal key: approve it with a passkey in the portal`);
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
