/**
 * The read API (docs/records.md): delegations, agreements and ledgers over HTTP, with the
 * remaining budget, for the organizations entitled to them and for the principal through a
 * portal session (./viewer.ts). Declarations stay declarative: nothing here writes.
 *
 * - `GET /v1/delegations/{delegation_id}`
 * - `GET /v1/agents/{agent_id}/delegations` (`?limit=` 1..200, default 50)
 * - `GET /v1/agreements/{agreement_id}`: the record and its budget
 * - `GET /v1/agreements/{agreement_id}/ledger` (`?after=` sequence, default 0; `?limit=` 1..500,
 *   default 100): entries in order, `next_after`, the budget
 *
 * 401 without a credential (or a dead portal session), 403 a key without `registry:read`, 404
 * for an unknown record and for one the caller may not see (the same answer), 503 without
 * storage.
 */
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { paymentParties, ledgerPage, agreementViews, delegationsOfAgent, delegationViews, type AgreementView } from "../../../store/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { agreementBody, budgetOf, delegationBody } from "./bodies.js";
import { theVisibleOne } from "../shared/visible-one.js";
import { AGREEMENT_SCHEMA, DELEGATION_SCHEMA, ID_PARAM, LEDGER_SCHEMA } from "./schemas.js";
import { maySee, viewerOf } from "./viewer.js";

const errors = errorResponses(400, 401, 403, 404, 503);

/** The agreement `id` (of `agentId` when named) if the request's reader may see it (else the 404 of an unknown one). */
async function visibleAgreement(app: FastifyInstance, request: Parameters<typeof viewerOf>[1], id: string, agentId?: string): Promise<AgreementView> {
  const viewer = await viewerOf(app, request);
  const found = await agreementViews(app.requireDb(), id, agentId);
  return theVisibleOne(
    found,
    async (a) => maySee(viewer, a, viewer.kind === "org" ? await paymentParties(app.requireDb(), a.record) : undefined),
    "AGREEMENT_NOT_FOUND",
  );
}

/** The optional `agent_id` query member naming whose record an id means (docs/reference/api.md). */
const AGENT_QUERY = { agent_id: ID_PARAM } as const;

const recordRoutes: FastifyPluginAsync = async (app) => {
  app.get<{ Params: { delegation_id: string }; Querystring: { agent_id?: string } }>(
    "/v1/delegations/:delegation_id",
    {
      schema: {
        tags: ["records"],
        summary: "Read a delegation (its organization, its agent's operator, or its principal's portal session)",
        params: { type: "object", required: ["delegation_id"], properties: { delegation_id: ID_PARAM } },
        querystring: { type: "object", properties: AGENT_QUERY },
        response: { 200: { ...DELEGATION_SCHEMA, description: "The delegation as stored, with its state" }, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request) => {
      const viewer = await viewerOf(app, request);
      const found = await delegationViews(app.requireDb(), request.params.delegation_id, request.query.agent_id);
      return delegationBody(await theVisibleOne(found, (d) => maySee(viewer, d), "DELEGATION_NOT_FOUND"));
    },
  );

  app.get<{ Params: { agent_id: string }; Querystring: { limit?: number } }>(
    "/v1/agents/:agent_id/delegations",
    {
      schema: {
        tags: ["records"],
        summary: "List an agent's delegations, newest grant first (its operator, or its principal's portal session)",
        params: { type: "object", required: ["agent_id"], properties: { agent_id: ID_PARAM } },
        querystring: { type: "object", properties: { limit: { type: "integer", minimum: 1, maximum: 200, default: 50 } } },
        response: {
          200: {
            type: "object",
            description: "The agent's delegations",
            required: ["agent_id", "delegations"],
            properties: { agent_id: { type: "string" }, delegations: { type: "array", items: DELEGATION_SCHEMA } },
          },
          ...errors,
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request) => {
      const viewer = await viewerOf(app, request);
      const list = await delegationsOfAgent(app.requireDb(), request.params.agent_id, request.query.limit ?? 50);
      // The agent's owners are the same on every row: one that may not be seen hides them all.
      if (list.some((d) => !maySee(viewer, { orgId: null, operatorOrgId: d.operatorOrgId, principalId: d.principalId }))) throw new ApiError("AGENT_NOT_FOUND");
      return { agent_id: request.params.agent_id, delegations: list.map(delegationBody) };
    },
  );

  app.get<{ Params: { agreement_id: string }; Querystring: { agent_id?: string } }>(
    "/v1/agreements/:agreement_id",
    {
      schema: {
        tags: ["records"],
        summary: "Read an agreement and its remaining budget (its organization, its payment-side parties, or its principal's portal session)",
        params: { type: "object", required: ["agreement_id"], properties: { agreement_id: ID_PARAM } },
        querystring: { type: "object", properties: AGENT_QUERY },
        response: { 200: { ...AGREEMENT_SCHEMA, description: "The agreement record, its state and its budget" }, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request) => {
      const a = await visibleAgreement(app, request, request.params.agreement_id, request.query.agent_id);
      return agreementBody(app.requireDb(), a, app.clock().getTime());
    },
  );

  app.get<{ Params: { agreement_id: string }; Querystring: { after?: number; limit?: number; agent_id?: string } }>(
    "/v1/agreements/:agreement_id/ledger",
    {
      schema: {
        tags: ["records"],
        summary: "Read an agreement's ledger, paged, with the remaining budget",
        params: { type: "object", required: ["agreement_id"], properties: { agreement_id: ID_PARAM } },
        querystring: {
          type: "object",
          properties: {
            after: { type: "integer", minimum: 0, default: 0 },
            limit: { type: "integer", minimum: 1, maximum: 500, default: 100 },
            ...AGENT_QUERY,
          },
        },
        response: { 200: { ...LEDGER_SCHEMA, description: "A page of the ledger and the budget" }, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request) => {
      const a = await visibleAgreement(app, request, request.params.agreement_id, request.query.agent_id);
      const pool = app.requireDb();
      const after = request.query.after ?? 0;
      const limit = request.query.limit ?? 100;
      const entries = await ledgerPage(pool, a.agentId, a.agreementId, after, limit);
      const last = entries[entries.length - 1];
      return {
        agreement_id: a.agreementId,
        ledger_sequence: a.ledgerSequence,
        ...(a.ledgerHead ? { ledger_head: a.ledgerHead } : {}),
        entries,
        next_after: last && last.sequence < a.ledgerSequence ? last.sequence : null,
        budget: await budgetOf(pool, a, app.clock().getTime()),
      };
    },
  );
};

export default recordRoutes;
