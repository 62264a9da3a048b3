/**
 * API keys of one organization:
 * - `POST /v1/orgs/{org_id}/keys` `{name, scopes?}` -> 201 `{key_id, prefix, scopes, token}`,
 *   the token shown this once (`Cache-Control: no-store`);
 * - `GET /v1/orgs/{org_id}/keys` -> `{keys: [{key_id, prefix, name, scopes, created_at,
 *   revoked_at}]}` (never a token);
 * - `DELETE /v1/orgs/{org_id}/keys/{key_id}` -> the key, revoked (idempotent).
 *
 * Who: the admin token for any organization; an organization key holding `keys:write` for its
 * own organization only. Another organization's key gets 404 `organization was not found`,
 * exactly as if the organization did not exist. A key may grant only scopes it holds itself,
 * and may revoke only keys whose scopes it holds itself (403 otherwise: no escalation either
 * way, so a `keys:write`-only key can neither mint nor take away a `verify` or `outcomes:write`
 * key); the admin may grant any scope the organization type may hold and revoke any key.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { MAX_NAME_LENGTH, missingScopes, RegistryError, resolveScopes, SCOPES, type Scope } from "../../../core/registry/index.js";
import { getKey, issueKey, listKeys, revokeKey, getOrg, type Org } from "../../../store/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { textSchema } from "../../../core/schemas/index.js";

interface OrgParams {
  org_id: string;
}

const scopesSchema = { type: "array", items: { type: "string", enum: [...SCOPES] } } as const;

const keyRecordSchema = {
  type: "object",
  required: ["key_id", "prefix", "name", "scopes", "created_at", "revoked_at"],
  properties: {
    key_id: { type: "string" },
    prefix: { type: "string" },
    name: { type: "string" },
    scopes: scopesSchema,
    created_at: { type: "string", format: "date-time" },
    revoked_at: { type: "string", format: "date-time", nullable: true },
  },
} as const;

const errors = errorResponses(400, 401, 403, 404, 503);

export const orgParams = { type: "object", required: ["org_id"], properties: { org_id: { type: "string" } } } as const;

/**
 * The onRequest hook of the key routes: the admin, or a key of the organization in the path
 * holding keys:write (another organization's key: 404, whatever its scopes).
 */
export function requireKeyManager(app: FastifyInstance) {
  return async (request: FastifyRequest) => {
    const credential = await app.authenticate(request);
    if (credential.kind === "key") {
      const orgId = (request.params as Partial<OrgParams>).org_id;
      if (credential.org_id !== orgId) throw new ApiError("ORG_NOT_FOUND");
      if (!credential.scopes.includes("keys:write")) throw new ApiError("SCOPE_MISSING", "API key lacks the scope keys:write");
    }
    request.credential = credential;
  };
}

export async function orgOf(app: FastifyInstance, orgId: string): Promise<Org> {
  const org = await getOrg(app.requireDb(), orgId);
  if (!org) throw new ApiError("ORG_NOT_FOUND");
  return org;
}

/** Registers the key routes on `app`. */
export function registerKeyRoutes(app: FastifyInstance): void {
  const onRequest = requireKeyManager(app);

  app.post<{ Params: OrgParams; Body: { name: string; scopes?: string[] } }>(
    "/v1/orgs/:org_id/keys",
    {
      schema: {
        tags: ["registry"],
        summary: "Issue an API key (the token is returned once)",
        description:
          "Authorization: the admin token, or a key of this organization with keys:write. Without scopes the key gets the " +
          "organization type's default scopes. A key may grant only scopes it holds.",
        params: orgParams,
        body: {
          type: "object",
          required: ["name"],
          properties: { name: textSchema({ minLength: 1, maxLength: MAX_NAME_LENGTH }), scopes: { type: "array", items: { type: "string" } } },
        },
        response: {
          201: {
            type: "object",
            required: ["key_id", "prefix", "scopes", "token"],
            properties: { key_id: { type: "string" }, prefix: { type: "string" }, scopes: scopesSchema, token: { type: "string" } },
          },
          ...errors,
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request, reply) => {
      const org = await orgOf(app, request.params.org_id);
      let scopes: Scope[];
      try {
        scopes = resolveScopes(org.org_type, request.body.scopes);
      } catch (e) {
        if (e instanceof RegistryError) throw new ApiError("SCOPES_REJECTED", e.message);
        throw e;
      }
      const credential = request.credential;
      if (credential?.kind === "key") {
        const lacking = missingScopes(credential.scopes, scopes);
        if (lacking.length > 0) throw new ApiError("SCOPE_NOT_HELD", `a key cannot grant a scope it does not hold: ${lacking.join(", ")}`);
      }
      const key = await issueKey(app.requireDb(), { org_id: org.org_id, name: request.body.name, scopes }, app.clock());
      request.log.info({ org_id: org.org_id, key_id: key.key_id, scopes }, "API key issued");
      return reply.code(201).header("cache-control", "no-store").send(key);
    },
  );

  app.get<{ Params: OrgParams }>(
    "/v1/orgs/:org_id/keys",
    {
      schema: {
        tags: ["registry"],
        summary: "List an organization's API keys (never the tokens)",
        params: orgParams,
        response: { 200: { type: "object", required: ["keys"], properties: { keys: { type: "array", items: keyRecordSchema } } }, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request) => {
      const org = await orgOf(app, request.params.org_id);
      return { keys: await listKeys(app.requireDb(), org.org_id) };
    },
  );

  app.delete<{ Params: OrgParams & { key_id: string } }>(
    "/v1/orgs/:org_id/keys/:key_id",
    {
      schema: {
        tags: ["registry"],
        summary: "Revoke an API key (refused from the next request on)",
        params: { type: "object", required: ["org_id", "key_id"], properties: { org_id: { type: "string" }, key_id: { type: "string" } } },
        response: { 200: keyRecordSchema, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request) => {
      const org = await orgOf(app, request.params.org_id);
      const credential = request.credential;
      if (credential?.kind === "key") {
        // Scopes of a key never change, so this read cannot race with the revocation below.
        const target = await getKey(app.requireDb(), org.org_id, request.params.key_id);
        const lacking = target ? missingScopes(credential.scopes, target.scopes) : [];
        if (lacking.length > 0)
          throw new ApiError("REVOKE_SCOPE_NOT_HELD", `a key cannot revoke a key holding a scope it does not hold: ${lacking.join(", ")}`);
      }
      const key = await revokeKey(app.requireDb(), org.org_id, request.params.key_id, app.clock());
      // Before answering: this process must refuse the key from now on (others: the change notice).
      app.credentials.clear();
      if (!key) throw new ApiError("KEY_NOT_FOUND");
      request.log.info({ org_id: org.org_id, key_id: key.key_id }, "API key revoked");
      return key;
    },
  );
}
