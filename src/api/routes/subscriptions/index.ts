/**
 * Subscriptions to an agent's signed alerts (scope subscriptions:write):
 * - `POST /v1/subscriptions` `{agent_id, webhook_url}` -> 201 `{subscription_id, agent_id,
 *   webhook_url}` (200 with the existing one when the organization already holds the same
 *   active subscription); the URL must be https, or http on localhost (400 otherwise, see
 *   src/core/registry/webhook-url.ts); unknown agent 404; a NEW subscription past the
 *   organization's cap of active ones (BUR_MAX_SUBSCRIPTIONS_PER_ORG, default 100) is the 409
 *   `organization reached its subscription cap (N)` (delete one to make room);
 * - `GET /v1/subscriptions` -> `{subscriptions: [...]}`, the organization's active ones;
 * - `DELETE /v1/subscriptions/{subscription_id}` -> the subscription, inactive (another
 *   organization's or an unknown id: 404).
 */
import type { FastifyPluginAsync } from "fastify";
import { AGENT_ID_PATTERN, parseWebhookUrl, RegistryError } from "../../../core/registry/index.js";
import { getAgent, deactivateSubscription, listSubscriptions, subscribeWithinCap } from "../../../store/index.js";
import { keyCredential } from "../../plugins/auth.js";
import { ApiError, errorResponses } from "../../errors.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";

const subscriptionSchema = {
  type: "object",
  required: ["subscription_id", "agent_id", "webhook_url"],
  properties: {
    subscription_id: { type: "string", pattern: "^sub_[0-9a-f]{24}$" },
    agent_id: { type: "string" },
    webhook_url: { type: "string" },
    created_at: { type: "string", format: "date-time" },
    active: { type: "boolean" },
  },
} as const;

const errors = errorResponses(400, 401, 403, 404, 503);
const postErrors = errorResponses(400, 401, 403, 404, 409, 503);

function webhookUrl(input: string): string {
  try {
    return parseWebhookUrl(input);
  } catch (e) {
    if (e instanceof RegistryError) throw new ApiError("WEBHOOK_URL_REJECTED", e.message);
    throw e;
  }
}

const subscriptionRoutes: FastifyPluginAsync = async (app) => {
  const onRequest = app.requireScope("subscriptions:write");

  app.post<{ Body: { agent_id: string; webhook_url: string } }>(
    "/v1/subscriptions",
    {
      schema: {
        tags: ["registry"],
        summary: "Subscribe to an agent's signed alerts (scope subscriptions:write)",
        description:
          "Alerts (revocation, incident, score drop of 50 points or more) are POSTed to webhook_url, signed with the log key " +
          "(typ svc-bureau-alert+jws). webhook_url: https, or http on localhost / 127.0.0.0/8 / [::1]; no credentials, no fragment. " +
          "An organization holds at most BUR_MAX_SUBSCRIPTIONS_PER_ORG active subscriptions (default 100): a new one past it is a 409.",
        body: {
          type: "object",
          required: ["agent_id", "webhook_url"],
          properties: { agent_id: { type: "string", pattern: AGENT_ID_PATTERN }, webhook_url: { type: "string", minLength: 1 } },
        },
        response: { 200: subscriptionSchema, 201: subscriptionSchema, ...postErrors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request, reply) => {
      const credential = keyCredential(request);
      const url = webhookUrl(request.body.webhook_url);
      const pool = app.requireDb();
      const agent = await getAgent(pool, request.body.agent_id);
      if (!agent) throw new ApiError("AGENT_NOT_FOUND");
      const cap = app.settings.subscriptionCap;
      const out = await subscribeWithinCap(pool, { org_id: credential.org_id, agent_id: agent.agent_id, webhook_url: url }, app.clock(), cap);
      if (!out.ok) throw new ApiError("SUBSCRIPTION_CAP_REACHED", `organization reached its subscription cap (${out.cap})`);
      const { subscription, created } = out;
      if (created) request.log.info({ subscription_id: subscription.subscription_id, agent_id: agent.agent_id }, "subscription created");
      return reply.code(created ? 201 : 200).send({
        subscription_id: subscription.subscription_id,
        agent_id: subscription.agent_id,
        webhook_url: subscription.webhook_url,
      });
    },
  );

  app.get(
    "/v1/subscriptions",
    {
      schema: {
        tags: ["registry"],
        summary: "The organization's active subscriptions (scope subscriptions:write)",
        response: {
          200: { type: "object", required: ["subscriptions"], properties: { subscriptions: { type: "array", items: subscriptionSchema } } },
          ...errors,
        },
      },
      onRequest,
    },
    async (request) => {
      const credential = keyCredential(request);
      return { subscriptions: await listSubscriptions(app.requireDb(), credential.org_id) };
    },
  );

  app.delete<{ Params: { subscription_id: string } }>(
    "/v1/subscriptions/:subscription_id",
    {
      schema: {
        tags: ["registry"],
        summary: "End a subscription (scope subscriptions:write)",
        params: { type: "object", required: ["subscription_id"], properties: { subscription_id: { type: "string" } } },
        response: { 200: subscriptionSchema, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request) => {
      const credential = keyCredential(request);
      const sub = await deactivateSubscription(app.requireDb(), credential.org_id, request.params.subscription_id);
      if (!sub) throw new ApiError("SUBSCRIPTION_NOT_FOUND");
      request.log.info({ subscription_id: sub.subscription_id }, "subscription ended");
      return sub;
    },
  );
};

export default subscriptionRoutes;
