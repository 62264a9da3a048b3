/**
 * Acknowledgement keys of a payment-side organization: the public keys whose acknowledgements
 * name it as a party of an agreement (docs/verify.md, "Who records outcomes"):
 * - `POST /v1/orgs/{org_id}/ack-keys` `{public_key}` -> 201 the key record
 *   `{thumbprint, org_id, public_key, created_at, revoked_at}` (`thumbprint`: its RFC 7638 id);
 * - `GET /v1/orgs/{org_id}/ack-keys` -> `{keys: [...]}`;
 * - `DELETE /v1/orgs/{org_id}/ack-keys/{thumbprint}` -> the key, revoked (idempotent): from
 *   then on an acknowledgement signed with it names nobody.
 *
 * Who: as for API keys (./keys.ts): the admin token, or a key of this organization holding
 * `keys:write`; another organization's key gets 404. Only payment-side organizations
 * (`processor_psp`, `bank_issuer`, `wallet`, `merchant`) hold acknowledgement keys (403 for an
 * `agent_operator`). The key is an Ed25519 or P-256 public JWK (a private member is 400); a key
 * this organization registered before is 409 (another organization holding it is no conflict).
 */
import type { FastifyInstance } from "fastify";
import { JoseError, keyId, parsePublicJwk } from "../../../core/jose/index.js";
import { insertAckKey, listAckKeys, revokeAckKey } from "../../../store/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { orgOf, orgParams, requireKeyManager } from "./keys.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";

const ackKeySchema = {
  type: "object",
  required: ["thumbprint", "org_id", "public_key", "created_at", "revoked_at"],
  properties: {
    thumbprint: { type: "string" },
    org_id: { type: "string" },
    public_key: { type: "object", additionalProperties: true },
    created_at: { type: "string", format: "date-time" },
    revoked_at: { type: "string", format: "date-time", nullable: true },
  },
} as const;

const errors = errorResponses(400, 401, 403, 404, 409, 503);

/** The payment-side organization `orgId`, or 404 / 403. */
async function paymentSideOf(app: FastifyInstance, orgId: string) {
  const org = await orgOf(app, orgId);
  if (org.org_type === "agent_operator") throw new ApiError("ACK_KEYS_PAYMENT_SIDE_ONLY");
  return org;
}

/** Registers the acknowledgement-key routes on `app`. */
export function registerAckKeyRoutes(app: FastifyInstance): void {
  const onRequest = requireKeyManager(app);

  app.post<{ Params: { org_id: string }; Body: { public_key: unknown } }>(
    "/v1/orgs/:org_id/ack-keys",
    {
      schema: {
        tags: ["registry"],
        summary: "Register a key that signs this organization's acknowledgements (payment-side organizations)",
        description:
          "Authorization: the admin token, or a key of this organization with keys:write. An acknowledgement with role merchant, psp or issuer names an organization " +
          "(so that it may record outcomes and read the agreement) only when signed by a live key that organization registered here.",
        params: orgParams,
        body: { type: "object", required: ["public_key"], properties: { public_key: { type: "object", description: "Ed25519 or P-256 public JWK" } } },
        response: { 201: ackKeySchema, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request, reply) => {
      const org = await paymentSideOf(app, request.params.org_id);
      let publicKey;
      try {
        publicKey = parsePublicJwk(request.body.public_key);
      } catch (e) {
        if (e instanceof JoseError) throw new ApiError("PUBLIC_KEY_INVALID", `public_key: ${e.message}`);
        throw e;
      }
      const out = await insertAckKey(app.requireDb(), { orgId: org.org_id, thumbprint: keyId(publicKey), publicKey }, app.clock());
      if (!out.ok) throw new ApiError("ACK_KEY_TAKEN");
      request.log.info({ org_id: org.org_id, thumbprint: out.key.thumbprint }, "acknowledgement key registered");
      return reply.code(201).send(out.key);
    },
  );

  app.get<{ Params: { org_id: string } }>(
    "/v1/orgs/:org_id/ack-keys",
    {
      schema: {
        tags: ["registry"],
        summary: "List a payment-side organization's acknowledgement keys",
        params: orgParams,
        response: { 200: { type: "object", required: ["keys"], properties: { keys: { type: "array", items: ackKeySchema } } }, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request) => {
      const org = await paymentSideOf(app, request.params.org_id);
      return { keys: await listAckKeys(app.requireDb(), org.org_id) };
    },
  );

  app.delete<{ Params: { org_id: string; thumbprint: string } }>(
    "/v1/orgs/:org_id/ack-keys/:thumbprint",
    {
      schema: {
        tags: ["registry"],
        summary: "Revoke an acknowledgement key (acknowledgements signed with it name nobody from now on)",
        params: {
          type: "object",
          required: ["org_id", "thumbprint"],
          properties: { org_id: { type: "string" }, thumbprint: { type: "string", minLength: 1, maxLength: 80 } },
        },
        response: { 200: ackKeySchema, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest,
    },
    async (request) => {
      const org = await paymentSideOf(app, request.params.org_id);
      const key = await revokeAckKey(app.requireDb(), org.org_id, request.params.thumbprint, app.clock());
      if (!key) throw new ApiError("ACK_KEY_NOT_FOUND");
      request.log.info({ org_id: org.org_id, thumbprint: key.thumbprint }, "acknowledgement key revoked");
      return key;
    },
  );
}
