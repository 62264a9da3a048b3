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
 * a kid this organization registered before, or a key any organization holds, is 409. An
 * optional `key_proof` (`svc-issuer-key-pop+jws`, src/core/registry/key-proof.ts; 400 when it
 * does not prove possession) makes the registration win over another wallet's unproven
 * registration of the same key, which is revoked and marked displaced (src/store/issuer-keys.ts).
 */
import type { FastifyInstance } from "fastify";
import { JoseError, keyId, parsePublicJwk } from "../../../core/jose/index.js";
import { ISSUER_KEY_POP_TYP, checkIssuerKeyPop } from "../../../core/registry/index.js";
import { withTransaction, insertIssuerKey, listIssuerKeys, revokeIssuerKey } from "../../../store/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { orgOf, orgParams, requireKeyManager } from "./keys.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { hasNul } from "../../../core/schemas/index.js";

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
    key_proven: { type: "boolean", description: "true when the registration proved possession of the key (key_proof); absent otherwise" },
    displaced_by: { type: "string", description: "The organization whose proven registration of this key displaced (and revoked) this one" },
    displaced: {
      type: "object",
      description: "Only in the answer of a proven registration that displaced another wallet's unproven registration of the key",
      properties: { org_id: { type: "string" }, kid: { type: "string" } },
    },
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

  app.post<{ Params: { org_id: string }; Body: { public_key: unknown; key_proof?: unknown } }>(
    "/v1/orgs/:org_id/issuer-keys",
    {
      schema: {
        tags: ["registry"],
        summary: "Register a key trusted to issue payment mandates (wallet organizations)",
        description: "Authorization: the admin token, or a key of this organization with keys:write. kid is the JWK's kid when given, else its RFC 7638 id.",
        params: orgParams,
        body: {
          type: "object",
          required: ["public_key"],
          properties: {
            public_key: { type: "object", description: "Ed25519 or P-256 public JWK" },
            key_proof: {
              type: "object",
              description:
                `Optional proof of possession: {svc_issuer_key_pop: 1, org_id, thumbprint, at, signature}, signature a flattened JWS (typ ${ISSUER_KEY_POP_TYP}) by the key ` +
                "being registered over the JCS of the other members; at within 5 minutes of the service clock. A proven registration displaces another wallet's unproven one of the same key.",
            },
          },
        },
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
      if (own !== undefined && (typeof own !== "string" || own.length === 0 || own.length > 256 || hasNul(own))) {
        throw new ApiError("PUBLIC_KEY_INVALID", "public_key.kid must be a string of 1 to 256 characters");
      }
      const thumbprint = keyId(publicKey);
      const now = app.clock();
      const proof = request.body.key_proof;
      if (proof !== undefined) {
        const checked = await checkIssuerKeyPop(proof, { orgId: org.org_id, publicKey, thumbprint, nowMs: now.getTime() });
        if (!checked.ok) throw new ApiError("ISSUER_KEY_PROOF_INVALID", `key_proof: ${checked.problem}`);
      }
      const input = { kid: own ?? thumbprint, thumbprint, orgId: org.org_id, publicKey, keyProven: proof !== undefined };
      const out = await withTransaction(app.requireDb(), async (c) => {
        const r = await insertIssuerKey(c, input, now);
        if (!r.ok) throw new ApiError("ISSUER_KEY_TAKEN", r.conflict === "kid" ? "issuer key kid is already registered" : "issuer key is already registered");
        return r;
      });
      request.log.info({ org_id: org.org_id, kid: out.key.kid, key_proven: proof !== undefined, displaced: out.displaced }, "issuer key registered");
      return reply.code(201).send(out.displaced ? { ...out.key, displaced: out.displaced } : out.key);
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
        params: {
          type: "object",
          required: ["org_id", "kid"],
          properties: { org_id: { type: "string" }, kid: { type: "string", minLength: 1, maxLength: 256 } },
        },
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
