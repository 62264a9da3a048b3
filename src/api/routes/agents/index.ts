/**
 * Agents: registration (./register.ts), signed requests and the key directory
 * (./signed-requests.ts), `GET /v1/agents/{agent_id}` (scope registry:read; the
 * record with its current score, principal_id only for the owning organization) and
 * `PATCH /v1/agents/{agent_id}` (the owning operator, scope agents:write: `{status: active |
 * suspended | retired}`; retired is final, 409 after; an agent displaced by a proven
 * registration of its key is never active again, 409; another organization's key 403).
 */
import type { FastifyPluginAsync } from "fastify";
import { AGENT_STATUSES, canMoveAgent, type AgentStatus } from "../../../core/registry/index.js";
import { getAgent, setAgentStatus, agentStanding, withTransaction } from "../../../store/index.js";
import { keyCredential } from "../../plugins/auth.js";
import { ApiError, ERROR_BODY_SCHEMA, errorResponses } from "../../errors.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { KeyDirectoryAnswers } from "./key-directory.js";
import { registerAgentRegistration } from "./register.js";
import { registerSignedRequests } from "./signed-requests.js";
import { agentView, agentViewSchema } from "./view.js";

interface AgentParams {
  agent_id: string;
}

const agentParams = { type: "object", required: ["agent_id"], properties: { agent_id: { type: "string" } } } as const;

const errors = errorResponses(400, 401, 403, 404, 503);

const agentRoutes: FastifyPluginAsync = async (app) => {
  // The key directory's signed answers, kept until an agent or key changes (./key-directory.ts).
  const directory = new KeyDirectoryAnswers({ clock: () => app.clock().getTime() });
  if (app.changeFeed) directory.follow(app.changeFeed);
  registerAgentRegistration(app, directory);
  registerSignedRequests(app, directory); // the key directory and POST /v1/agents/verify-request

  app.get<{ Params: AgentParams }>(
    "/v1/agents/:agent_id",
    {
      schema: {
        tags: ["registry"],
        summary: "An agent's registry record (scope registry:read)",
        params: agentParams,
        response: { 200: agentViewSchema, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireScope("registry:read"),
    },
    async (request) => {
      const credential = keyCredential(request);
      const pool = app.requireDb();
      const agent = await getAgent(pool, request.params.agent_id);
      if (!agent) throw new ApiError("AGENT_NOT_FOUND");
      return agentView(agent, await agentStanding(pool, agent, app.clock()), credential.org_id);
    },
  );

  app.patch<{ Params: AgentParams; Body: { status: AgentStatus } }>(
    "/v1/agents/:agent_id",
    {
      schema: {
        tags: ["registry"],
        summary: "Change an agent's status (the owning operator, scope agents:write)",
        description: "active <-> suspended; active or suspended -> retired; retired is final. Verify refuses an agent that is not active.",
        params: agentParams,
        body: { type: "object", required: ["status"], properties: { status: { type: "string", enum: [...AGENT_STATUSES] } } },
        response: { 200: agentViewSchema, ...errors, 409: ERROR_BODY_SCHEMA },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireScope("agents:write"),
    },
    async (request) => {
      const credential = keyCredential(request);
      const now = app.clock();
      const pool = app.requireDb();
      const agent = await withTransaction(pool, async (client) => {
        const current = await getAgent(client, request.params.agent_id, { forUpdate: true });
        if (!current) throw new ApiError("AGENT_NOT_FOUND");
        if (current.org_id !== credential.org_id) throw new ApiError("AGENT_NOT_OWNED");
        if (!canMoveAgent(current.status, request.body.status)) throw new ApiError("AGENT_RETIRED");
        if (current.displaced_at !== null && request.body.status === "active") throw new ApiError("AGENT_DISPLACED");
        return (await setAgentStatus(client, current.agent_id, request.body.status, now)) ?? current;
      });
      // This process's next verify of the agent reads the new status at once (other processes
      // drop their snapshot on the change notice, docs/verify.md "Caches").
      app.verifyRuntime?.candidates.forget(agent.agent_id);
      directory.clear();
      request.log.info({ agent_id: agent.agent_id, status: agent.status }, "agent status set");
      return agentView(agent, await agentStanding(pool, agent, now), credential.org_id);
    },
  );
};

export default agentRoutes;
