/**
 * The principal's own records, for the portal's pages (docs/portal.md, "The principal's
 * records"), all with `Authorization: Bearer bps_...` (a live portal session):
 *
 * - `GET /v1/portal/agents`: the agents registered with the session's principal;
 * - `GET /v1/portal/delegations`: their delegations, each with its remaining budget;
 * - `GET /v1/portal/agreements`: their agreements, each with its remaining budget (the same
 *   body as `GET /v1/agreements/{id}`);
 * - `POST /v1/portal/delegations/{delegation_id}/revoke` `{reason?}`: the principal revokes one
 *   of those delegations (and everything below it), recorded `by: "principal"`, logged in the
 *   transparency log and alerted to subscribers (src/api/routes/delegations/revoke.ts).
 *
 * Promise: a principal sees and revokes only records whose agent is registered with its
 * principal id; any other delegation id answers 404 `delegation was not found`, exactly as an
 * unknown one. Lists hold at most `limit` (1..200, default 100) items, newest first (agents:
 * oldest registration first). 401 without a live session; 503 without storage (and, for the
 * revocation, without the log signing key). Answers are `Cache-Control: no-store`.
 */
import type { FastifyInstance } from "fastify";
import { loadDelegation, agentsOfPrincipal, agreementIdsOfPrincipal, agreementView, delegationsOfPrincipal, delegationViews } from "../../../store/index.js";
import { MAX_REASON_LENGTH } from "../../../core/delegation/index.js";
import { errorResponses } from "../../errors.js";
import { REVOKE_ANSWER_SCHEMA, revokeStoredDelegation } from "../delegations/revoke.js";
import { NO_NUL_PATTERN, registrySchemaErrors } from "../shared/schema-errors.js";
import { theVisibleOne } from "../shared/visible-one.js";
import { agreementBody, delegationBody, delegationBudget } from "../records/bodies.js";
import { AGREEMENT_SCHEMA, BUDGET_LINE_PERIODS, DELEGATION_SCHEMA, ID_PARAM } from "../records/schemas.js";
import { requireSession } from "./sessions.js";

const LIMIT = { type: "object", properties: { limit: { type: "integer", minimum: 1, maximum: 200, default: 100 } } } as const;
const str = { type: "string" } as const;

const budgetLineSchema = {
  type: ["object", "null"],
  description: "What is left under the delegation's scope limits, over the spend of all its agreements (null: its scope names no currency)",
  properties: { delegation_id: str, currency: str, maximum_amount: str, limit: str, spent: str, remaining: str, periods: BUDGET_LINE_PERIODS },
} as const;

/** The reason recorded when the principal gives none. */
export const PORTAL_REVOKE_REASON = "revoked by the principal in the portal";

/** Registers the principal's record routes. */
export function registerPortalRecords(app: FastifyInstance): void {
  const errors = errorResponses(400, 401, 503);

  app.get<{ Querystring: { limit?: number } }>(
    "/v1/portal/agents",
    {
      schema: {
        tags: ["portal"],
        summary: "The signed-in principal's agents",
        querystring: LIMIT,
        response: {
          200: {
            type: "object",
            description: "The agents registered with the session's principal",
            required: ["principal_id", "agents"],
            properties: {
              principal_id: str,
              agents: {
                type: "array",
                items: {
                  type: "object",
                  required: ["agent_id", "status", "verification_level", "fingerprint", "registered_at"],
                  properties: { agent_id: str, status: str, verification_level: str, fingerprint: str, registered_at: { type: "string", format: "date-time" } },
                },
              },
            },
          },
          ...errors,
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request, reply) => {
      const { principalId } = await requireSession(app, request);
      void reply.header("cache-control", "no-store");
      return { principal_id: principalId, agents: await agentsOfPrincipal(app.requireDb(), principalId, request.query.limit ?? 100) };
    },
  );

  app.get<{ Querystring: { limit?: number } }>(
    "/v1/portal/delegations",
    {
      schema: {
        tags: ["portal"],
        summary: "The signed-in principal's delegations, with what is left of each",
        querystring: LIMIT,
        response: {
          200: {
            type: "object",
            description: "The delegations of the principal's agents, newest grant first",
            required: ["principal_id", "delegations"],
            properties: {
              principal_id: str,
              delegations: {
                type: "array",
                items: {
                  ...DELEGATION_SCHEMA,
                  required: [...DELEGATION_SCHEMA.required, "budget"],
                  properties: { ...DELEGATION_SCHEMA.properties, budget: budgetLineSchema },
                },
              },
            },
          },
          ...errors,
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request, reply) => {
      const { principalId } = await requireSession(app, request);
      const pool = app.requireDb();
      const list = await delegationsOfPrincipal(pool, principalId, request.query.limit ?? 100);
      const delegations = [];
      for (const d of list) delegations.push({ ...delegationBody(d), budget: await delegationBudget(pool, d, app.clock().getTime()) });
      void reply.header("cache-control", "no-store");
      return { principal_id: principalId, delegations };
    },
  );

  app.get<{ Querystring: { limit?: number } }>(
    "/v1/portal/agreements",
    {
      schema: {
        tags: ["portal"],
        summary: "The signed-in principal's agreements, with their state and remaining budget",
        querystring: LIMIT,
        response: {
          200: {
            type: "object",
            description: "The agreements of the principal's agents, most recently changed first (each as GET /v1/agreements/{id} answers)",
            required: ["principal_id", "agreements"],
            properties: { principal_id: str, agreements: { type: "array", items: AGREEMENT_SCHEMA } },
          },
          ...errors,
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request, reply) => {
      const { principalId } = await requireSession(app, request);
      const pool = app.requireDb();
      const agreements = [];
      for (const { agentId, agreementId } of await agreementIdsOfPrincipal(pool, principalId, request.query.limit ?? 100)) {
        const a = await agreementView(pool, agreementId, agentId);
        if (a) agreements.push(await agreementBody(pool, a, app.clock().getTime()));
      }
      void reply.header("cache-control", "no-store");
      return { principal_id: principalId, agreements };
    },
  );

  app.post<{ Params: { delegation_id: string }; Body: { reason?: string; agent_id?: string } | null | undefined }>(
    "/v1/portal/delegations/:delegation_id/revoke",
    {
      schema: {
        tags: ["portal"],
        summary: "Revoke one of the signed-in principal's delegations (and everything below it)",
        description:
          "Recorded as revoked by the principal (`by: principal`), appended to the transparency log as a `revocation` entry and " +
          "alerted to the subscribers of every affected agent; verify refuses at once. Only for a delegation whose agent is registered " +
          "with the session's principal (any other id: 404, as an unknown one). A repeat answers `revoked: false`.",
        params: { type: "object", required: ["delegation_id"], properties: { delegation_id: ID_PARAM } },
        body: {
          type: ["object", "null"],
          properties: {
            reason: {
              type: "string",
              maxLength: MAX_REASON_LENGTH,
              pattern: NO_NUL_PATTERN,
              description: `Recorded with the revocation (default "${PORTAL_REVOKE_REASON}")`,
            },
            agent_id: {
              ...ID_PARAM,
              description: "The delegation's agent, when the principal's agents hold delegations of several organizations under the id",
            },
          },
        },
        response: {
          200: { ...REVOKE_ANSWER_SCHEMA, description: "Revoked (or already revoked: `revoked: false`)" },
          ...errorResponses(400, 401, 404, 409, 500, 503),
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request) => {
      const { principalId } = await requireSession(app, request);
      const pool = app.requireDb();
      const id = request.params.delegation_id;
      // The principal's delegation under the id (its agents' records only; an id held by agents of several organizations names one of them each).
      const view = await theVisibleOne(
        await delegationViews(pool, id, request.body?.agent_id ?? undefined),
        (d) => d.principalId === principalId,
        "DELEGATION_NOT_FOUND",
      );
      const reason = request.body?.reason?.trim() || PORTAL_REVOKE_REASON;
      return revokeStoredDelegation(app, request, id, await loadDelegation(pool, id, view.agentId), { by: "principal", reason, principalId });
    },
  );
}
