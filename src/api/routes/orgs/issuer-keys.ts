/**
 * Issuer keys of a wallet organization: the public keys trusted to issue AP2 payment mandates
 * (docs/mandates.md, "Trusted issuers"):
 * - `POST /v1/orgs/{org_id}/issuer-keys` `{public_key}` -> 201 the key record
 *   `{kid, thumbprint, org_id, public_key, created_at, revoked_at}`; `kid` is the JWK's own `kid`
 *   when it has one (what the issuer's JWT header names), else its RFC 7638 id;
 * - `GET /v1/orgs/{org_id}/issuer-keys` -> `{keys: [...]}`;
 * - `DELETE /v1/orgs/{org_id}/issuer-keys/{kid}` -> the key, revoked (idempotent): mandates
 *   signed with it are refused from then on (those recorded before stay until revoked).
 *
 * Who: as for API keys (./keys.ts): the admin token, or a key of this organization holding
 * `keys:write`; another organization's key gets 404. Only a `wallet` organization holds issuer
 * keys (403 otherwise). The key is an Ed25519 or P-256 public JWK (a private member is 400);
 * a kid or key registered before is 409.
 */
import type { FastifyInstance } from "fastify";
import { JoseError, keyId, parsePublicJwk } from "../../../core/jose/index.js";
import { insertIssuerKey, listIssuerKeys, revokeIssuerKey } from "../../../store/issuer-keys.js";
import { ApiError, errorResponses } from "../../errors.js";
import { orgOf, orgParams, requireKeyManager } from "./keys.js";
import { registrySchemaErrors } from "./schema-errors.js";

const issuerKeySchema = {
  type: "object",
  required: ["kid", "thumbprint", "org_id", "public_key", "created_at", "revoked_at"],
  properties: {
    kid: { type: "string" },
    thumbprint: { type: "string" },
    org_id: { type: "string" },
    public_key: { type: "object", additionalProperties: true },
    created_at: { type: "string", format: "date-time" },
    revoked_at: { type: "string", format: "date-time", nullable: true },
  },
} as const;

const errors = errorResponses(400, 401, 403, 404, 409, 503);

/** The wallet organization `orgId`, or 404 / 403. */
async function walletOf(app: FastifyInstance, orgId: string) {
  const org = await orgOf(app, orgId);
  if (org.org_type !== "wallet") throw new ApiError("ISSUER_KEYS_WALLET_ONLY");
  return org;
}

/** Registers the issuer-key routes on `app`. */
export function registerIssuerKeyRoutes(app: FastifyInstance): void {
  const onRequest = requireKeyManager(app);

  app.post<{ Params: { org_id: string }; Body: { public_key: unknown } }>(
    "/v1/orgs/:org_id/issuer-keys",
    {
      schema: {
        tags: ["registry"],
        summary: "Register a key trusted to issue payment mandates (wallet organizations)",
        description: "Authorization: the admin token, or a key of this organization with keys:write. kid is the JWK's kid when given, else its RFC 7638 id.",
        params: orgParams,
        body: { type: "object", required: ["public_key"], properties: { public_key: { type: "object", description: "Ed25519 or P-256 public JWK" } } },
        response: { 201: issuerKeySchema, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request, reply) => {
      const org = await walletOf(app, request.params.org_id);
      let publicKey;
      try {
        publicKey = parsePublicJwk(request.body.public_key);
      } catch (e) {
        if (e instanceof JoseError) throw new ApiError("PUBLIC_KEY_INVALID", `public_key: ${e.message}`);
        throw e;
      }
      const own = (request.body.public_key as { kid?: unknown }).kid;
      if (own !== undefined && (typeof own !== "string" || own.length === 0 || own.length > 256 || own.includes("\u0000"))) {
        throw new ApiError("PUBLIC_KEY_INVALID", "public_key.kid must be a string of 1 to 256 characters");
      }
      const thumbprint = keyId(publicKey);
      const out = await insertIssuerKey(app.requireDb(), { kid: own ?? thumbprint, thumbprint, orgId: org.org_id, publicKey }, app.clock());
      if (!out.ok) throw new ApiError("ISSUER_KEY_TAKEN", out.conflict === "kid" ? "issuer key kid is already registered" : "issuer key is already registered");
      request.log.info({ org_id: org.org_id, kid: out.key.kid }, "issuer key registered");
      return reply.code(201).send(out.key);
    },
  );

  app.get<{ Params: { org_id: string } }>(
    "/v1/orgs/:org_id/issuer-keys",
    {
      schema: {
        tags: ["registry"],
        summary: "List a wallet organization's issuer keys",
        params: orgParams,
        response: { 200: { type: "object", required: ["keys"], properties: { keys: { type: "array", items: issuerKeySchema } } }, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request) => {
      const org = await walletOf(app, request.params.org_id);
      return { keys: await listIssuerKeys(app.requireDb(), org.org_id) };
    },
  );

  app.delete<{ Params: { org_id: string; kid: string } }>(
    "/v1/orgs/:org_id/issuer-keys/:kid",
    {
      schema: {
        tags: ["registry"],
        summary: "Revoke an issuer key (mandates signed with it are refused from now on)",
        params: { type: "object", required: ["org_id", "kid"], properties: { org_id: { type: "string" }, kid: { type: "string", minLength: 1, maxLength: 256 } } },
        response: { 200: issuerKeySchema, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request) => {
      const org = await walletOf(app, request.params.org_id);
      const key = await revokeIssuerKey(app.requireDb(), org.org_id, request.params.kid, app.clock());
      if (!key) throw new ApiError("ISSUER_KEY_NOT_FOUND");
      request.log.info({ org_id: org.org_id, kid: key.kid }, "issuer key revoked");
      return key;
    },
  );
}
