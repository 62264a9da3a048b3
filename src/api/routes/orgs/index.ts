/**
 * Organizations and their API keys:
 * - `POST /v1/orgs` (admin token): creates an active organization, 201 `{org_id, name,
 *   org_type, status}` (no key: the admin then issues the first one);
 * - the key routes of ./keys.ts;
 * - the issuer-key routes of wallet organizations, ./issuer-keys.ts;
 * - the acknowledgement-key routes of payment-side organizations, ./ack-keys.ts.
 *
 * Refusals: no bearer 401, another credential 403, BUR_ADMIN_TOKEN unset 503, an unknown
 * org_type or a missing name 400 (docs/registry.md).
 */
import type { FastifyPluginAsync } from "fastify";
import { MAX_NAME_LENGTH, ORG_TYPES, type OrgType } from "../../../core/registry/index.js";
import { createOrg } from "../../../store/index.js";
import { errorResponses } from "../../errors.js";
import { registerAckKeyRoutes } from "./ack-keys.js";
import { registerIssuerKeyRoutes } from "./issuer-keys.js";
import { registerKeyRoutes } from "./keys.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { textSchema } from "../../../core/schemas/index.js";

/** An organization as answered. */
export const orgSchema = {
  type: "object",
  required: ["org_id", "name", "org_type", "status"],
  properties: {
    org_id: { type: "string", pattern: "^org_[0-9a-f]{24}$" },
    name: { type: "string" },
    org_type: { type: "string", enum: [...ORG_TYPES] },
    status: { type: "string", enum: ["active"] },
  },
} as const;

const orgRoutes: FastifyPluginAsync = async (app) => {
  app.post<{ Body: { name: string; org_type: OrgType } }>(
    "/v1/orgs",
    {
      schema: {
        tags: ["registry"],
        summary: "Create a participant organization (admin)",
        description: "Authorization: Bearer <BUR_ADMIN_TOKEN>. The organization is active; issue its first key with POST /v1/orgs/{org_id}/keys.",
        body: {
          type: "object",
          required: ["name", "org_type"],
          properties: {
            name: textSchema({ minLength: 1, maxLength: MAX_NAME_LENGTH }),
            org_type: { type: "string", enum: [...ORG_TYPES] },
          },
        },
        response: {
          201: orgSchema,
          ...errorResponses(400, 401, 403, 503),
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireAdmin,
    },
    async (request, reply) => {
      const org = await createOrg(app.requireDb(), request.body, app.clock());
      request.log.info({ org_id: org.org_id, org_type: org.org_type }, "organization created");
      return reply.code(201).send({ org_id: org.org_id, name: org.name, org_type: org.org_type, status: org.status });
    },
  );

  registerKeyRoutes(app);
  registerIssuerKeyRoutes(app);
  registerAckKeyRoutes(app);
};

export default orgRoutes;
