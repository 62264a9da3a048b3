/**
 * `DELETE /svc/delegations/{id}`: revokes a delegation and everything below it in any chain
 * (its bound agreements are invalidated with it), appends ONE `revocation` log entry, alerts
 * the subscribers of every affected agent, all in one transaction, and announces the revoked
 * ids on `writ_revocations`, so verify on every data-plane process refuses at once
 * (src/verify/pipeline/revoke.ts, docs/verify.md).
 *
 * Who may revoke (checked before the body is read when a bearer is sent):
 * - the admin token: the service operator (`by: "service"`), any delegation, also an id known
 *   only as a link of a stored chain;
 * - an organization key with scope `agents:write` of the delegation's organization (or, for a
 *   delegation stored without one, the operator of its agent): policy acting for the principal
 *   (`by: "policy"`); any other organization gets 404, as for an unknown id;
 * - no bearer: the principal, with a body `{revocation: <JWS>}` signed by the delegation's
 *   `principal.public_key` (src/core/delegation/signed-revocation.ts; `by: "principal"`); 401
 *   when it does not verify. Without a bearer the answer never says whether a delegation
 *   exists: an unknown id answers exactly as a signature by the wrong key (401 `delegation
 *   revocation did not verify: the signature does not verify with the delegation principal's
 *   key`); only a verified principal learns more (409, a repeat).
 * An optional `reason` (at most 500 characters) is recorded for bearer callers.
 *
 * Answers 200 `{revoked: true, delegation_id, revoked_ids, agreement_ids, log_sequence}`; a
 * repeat `{revoked: false, delegation_id, revoked_ids: [], agreement_ids: [], log_sequence:
 * null}`; 404 `delegation was not found` (bearer callers only); 409 `delegation is not revocable` (`revocable:
 * false`); 503 without the log signing key.
 */
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { getAgentForVerify, loadDelegation, type RevokedBy, ownsRecord } from "../../../store/index.js";
import { MAX_REASON_LENGTH, verifyDelegationRevocation } from "../../../core/delegation/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { bearerToken } from "../../plugins/auth.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { REVOKE_ANSWER_SCHEMA, revokeStoredDelegation } from "./revoke.js";
import { textSchema } from "../../../core/schemas/index.js";

interface Params {
  id: string;
}

interface Body {
  revocation?: unknown;
  reason?: string;
}

const delegationRoutes: FastifyPluginAsync = async (app) => {
  /** Authenticates a bearer when one is sent (an organization key needs agents:write). */
  const bearerIfAny = async (request: FastifyRequest): Promise<void> => {
    if (bearerToken(request.headers.authorization) === null) return;
    const credential = await app.authenticate(request);
    if (credential.kind === "key" && !credential.scopes.includes("agents:write")) throw new ApiError("SCOPE_MISSING", "API key lacks the scope agents:write");
    request.credential = credential;
  };

  app.delete<{ Params: Params; Body: Body | undefined }>(
    "/svc/delegations/:id",
    {
      schema: {
        tags: ["verify"],
        summary: "Revoke a delegation and everything below it (admin, the delegation's organization with agents:write, or the principal's signed revocation)",
        params: { type: "object", required: ["id"], properties: { id: { type: "string", minLength: 1, maxLength: 256 } } },
        body: {
          type: ["object", "null"],
          properties: {
            revocation: { type: "object", description: "Flattened JWS (typ svc-delegation-revocation+jws) by the principal's key; only without a bearer" },
            reason: textSchema({ maxLength: MAX_REASON_LENGTH }),
          },
        },
        response: {
          200: { ...REVOKE_ANSWER_SCHEMA, description: "Revoked (or already revoked: `revoked: false`)" },
          ...errorResponses(400, 401, 403, 404, 409, 500, 503),
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: bearerIfAny,
    },
    async (request) => {
      const pool = app.requireDb();
      const id = request.params.id;
      const body = request.body ?? {};
      const credential = request.credential;
      const stored = await loadDelegation(pool, id);
      let by: RevokedBy;
      let reason: string;
      if (credential?.kind === "admin") {
        by = "service";
        reason = body.reason ?? "revoked by the service operator";
      } else if (credential?.kind === "key") {
        const operator = stored ? await getAgentForVerify(pool, stored.agentId) : undefined;
        if (!stored || !ownsRecord(credential.org_id, stored.orgId, operator?.org_id ?? null)) throw new ApiError("DELEGATION_NOT_FOUND");
        by = "policy";
        reason = body.reason ?? `revoked by policy acting for the principal (organization ${credential.org_id})`;
      } else {
        if (body.revocation === undefined) throw new ApiError("BEARER_REQUIRED");
        // An unknown id is checked like a known one (against no one's key): the same answer.
        const v = await verifyDelegationRevocation(body.revocation, id, stored?.record.principal?.public_key);
        if (!v.ok) throw new ApiError("DELEGATION_REVOCATION_INVALID", `delegation revocation did not verify: ${v.problem}`);
        by = "principal";
        reason = v.payload.reason === "" ? "revoked by the principal" : v.payload.reason;
      }
      return revokeStoredDelegation(app, request, id, stored, { by, reason });
    },
  );
};

export default delegationRoutes;
