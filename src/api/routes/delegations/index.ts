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
 * An id names a delegation within its organization (docs/scale.md, "Organization-scoped ids"):
 * the delegation meant is the one under the id the caller may revoke (the admin: any; an
 * organization key: its organization's; the principal: the one whose key verifies the signed
 * revocation), and its revocation reaches everything below it in that organization only. When
 * the caller may revoke several (agents of several organizations hold the id), the optional
 * query member `agent_id` names whose; without it 409 `the id names delegations of several
 * agents; name agent_id`. The admin's revocation of an id known only as a link of stored chains
 * is made in the organization of those chains (409 when several organizations name it).
 *
 * Answers 200 `{revoked: true, delegation_id, revoked_ids, agreement_ids, log_sequence}`; a
 * repeat `{revoked: false, delegation_id, revoked_ids: [], agreement_ids: [], log_sequence:
 * null}`; 404 `delegation was not found` (bearer callers only); 409 `delegation is not revocable` (`revocable:
 * false`); 503 without the log signing key.
 */
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { delegationLinkOrgs, getAgentForVerify, loadDelegationsById, type RevokedBy, ownsRecord, type StoredDelegation } from "../../../store/index.js";
import { MAX_REASON_LENGTH, verifyDelegationRevocation } from "../../../core/delegation/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { bearerToken } from "../../plugins/auth.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { REVOKE_ANSWER_SCHEMA, revokeStoredDelegation } from "./revoke.js";
import { textSchema } from "../../../core/schemas/index.js";
import { theVisibleOne } from "../shared/visible-one.js";

interface Params {
  id: string;
}

interface Query {
  agent_id?: string;
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

  app.delete<{ Params: Params; Querystring: Query; Body: Body | undefined }>(
    "/svc/delegations/:id",
    {
      schema: {
        tags: ["verify"],
        summary: "Revoke a delegation and everything below it (admin, the delegation's organization with agents:write, or the principal's signed revocation)",
        params: { type: "object", required: ["id"], properties: { id: { type: "string", minLength: 1, maxLength: 256 } } },
        querystring: {
          type: "object",
          properties: {
            agent_id: {
              type: "string",
              minLength: 1,
              maxLength: 256,
              description: "Whose delegation the id means, when agents of several organizations hold it",
            },
          },
        },
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
      const found = await loadDelegationsById(pool, id, request.query.agent_id);
      let stored: StoredDelegation | undefined;
      let linkOrg: string | null = null;
      let by: RevokedBy;
      let reason: string;
      if (credential?.kind === "admin") {
        by = "service";
        reason = body.reason ?? "revoked by the service operator";
        if (found.length > 0) stored = await theVisibleOne(found, () => true, "DELEGATION_NOT_FOUND");
        else if (request.query.agent_id === undefined) linkOrg = await theLinkOrg(pool, id);
        else throw new ApiError("DELEGATION_NOT_FOUND");
      } else if (credential?.kind === "key") {
        const owns = async (d: StoredDelegation) => ownsRecord(credential.org_id, d.orgId, (await getAgentForVerify(pool, d.agentId))?.org_id ?? null);
        stored = await theVisibleOne(found, owns, "DELEGATION_NOT_FOUND");
        by = "policy";
        reason = body.reason ?? `revoked by policy acting for the principal (organization ${credential.org_id})`;
      } else {
        if (body.revocation === undefined) throw new ApiError("BEARER_REQUIRED");
        // The delegation whose principal signed it; an unknown id is checked like a known one (against no one's key): the same answer.
        const signedBy = async (d: StoredDelegation) => (await verifyDelegationRevocation(body.revocation, id, d.record.principal?.public_key)).ok;
        const signed: StoredDelegation[] = [];
        for (const d of found) if (await signedBy(d)) signed.push(d);
        const v = await verifyDelegationRevocation(body.revocation, id, (signed[0] ?? found[0])?.record.principal?.public_key);
        if (!v.ok) throw new ApiError("DELEGATION_REVOCATION_INVALID", `delegation revocation did not verify: ${v.problem}`);
        stored = await theVisibleOne(signed, () => true, "DELEGATION_NOT_FOUND");
        by = "principal";
        reason = v.payload.reason === "" ? "revoked by the principal" : v.payload.reason;
      }
      return revokeStoredDelegation(app, request, id, stored, { by, reason }, linkOrg);
    },
  );
};

/** The one organization ('' for none: null) in which an id not stored is known as a link; 409 when several, 404 when none. */
async function theLinkOrg(pool: Parameters<typeof delegationLinkOrgs>[0], id: string): Promise<string | null> {
  const orgs = await delegationLinkOrgs(pool, id);
  if (orgs.length > 1) throw new ApiError("RECORD_ID_AMBIGUOUS", "the id names delegations of several agents; name agent_id");
  if (orgs[0] === undefined) throw new ApiError("DELEGATION_NOT_FOUND");
  return orgs[0] === "" ? null : orgs[0];
}

export default delegationRoutes;
