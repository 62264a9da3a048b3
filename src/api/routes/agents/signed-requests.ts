/**
 * Agents' signed HTTP requests (RFC 9421, Web Bot Auth; docs/reference/request-signatures.md):
 *
 * - `GET /.well-known/http-message-signatures-directory`: the key directory, one for the
 *   service: the public keys of every registered agent that is active and not displaced, in
 *   the directory draft's JWKS (media type application/http-message-signatures-directory+json,
 *   each key with `kid` = its thumbprint, `agent_id`, `operator_org_id`), signed by the log key
 *   (src/core/httpsig/directory.ts), `Cache-Control: public, max-age=300` (the revocation
 *   list's bound) and, for an answer kept in memory (./key-directory.ts: signed again after
 *   60 s, dropped on any agent or key change), its `Age`. 503 without storage or the log key.
 * - `POST /v1/agents/verify-request` (scope registry:read): checks a request an agent signed
 *   (src/verify/pipeline/signed-request.ts) and, for a named payment, whether a live grant could
 *   pay it now, spending nothing. Always 200 with `verified` and, when false, `reason`; 400 a
 *   body that is not a request (a relative URL, a header that is not a string).
 */
import type { FastifyInstance } from "fastify";
import { REASON_CODES } from "../../../core/evaluate/index.js";
import {
  DIRECTORY_MAX_AGE_SECONDS,
  DIRECTORY_MEDIA_TYPE,
  DIRECTORY_PATH,
  directoryKey,
  signDirectory,
  type HttpRequestLike,
} from "../../../core/httpsig/index.js";
import { currencyRefusal } from "../../../core/money/index.js";
import { directoryRows } from "../../../store/index.js";
import { type ProbePayment, checkSignedRequest } from "../../../verify/index.js";
import { ApiError, errorResponses, settingNotSet } from "../../errors.js";
import { keyListOptions } from "../shared/key-list.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { verifyRuntimeOf } from "../verify/index.js";
import type { KeyDirectoryAnswers } from "./key-directory.js";

const NO_NUL = "^[^\\u0000]*$";
const text = { type: "string", minLength: 1, maxLength: 200, pattern: NO_NUL } as const;

const BODY_SCHEMA = {
  type: "object",
  required: ["request"],
  properties: {
    request: {
      type: "object",
      description:
        "The request as the merchant received it: its method, absolute URL and header fields (at least Signature, Signature-Input, Signature-Agent and every covered field)",
      required: ["method", "url", "headers"],
      properties: {
        method: { type: "string", pattern: "^[A-Za-z]{1,16}$" },
        url: { type: "string", minLength: 1, maxLength: 8192, pattern: "^https?://[^\\u0000]+$", description: "Absolute URL (scheme, authority, path, query)" },
        headers: {
          type: "object",
          maxProperties: 100,
          additionalProperties: {
            anyOf: [
              { type: "string", maxLength: 8192 },
              { type: "array", maxItems: 16, items: { type: "string", maxLength: 8192 } },
            ],
          },
        },
      },
    },
    payment: {
      type: "object",
      description: "Asks whether the agent holds a live grant that could pay this now (nothing is spent)",
      required: ["amount", "currency", "merchant"],
      properties: {
        amount: { type: "number", minimum: 0, maximum: 1e12, description: "Major units of currency" },
        currency: { type: "string", pattern: "^[A-Z]{3}$" },
        merchant: text,
        action_type: { type: "string", minLength: 1, maxLength: 64, pattern: NO_NUL, description: "Default purchase" },
        category: text,
        item: text,
      },
    },
  },
} as const;

const reason = { type: "string", enum: REASON_CODES } as const;

const ANSWER_SCHEMA = {
  type: "object",
  required: ["verified"],
  properties: {
    verified: { type: "boolean" },
    reason: { ...reason, description: "Why the request is refused (absent when verified)" },
    message: { type: "string" },
    keyid: { type: "string", description: "The signature's keyid: the RFC 7638 SHA-256 thumbprint of the agent's key, base64url" },
    signature: {
      type: "object",
      required: ["label", "keyid", "created", "expires", "nonce", "tag", "components"],
      properties: {
        label: { type: "string" },
        keyid: { type: "string" },
        created: { type: "string", format: "date-time" },
        expires: { type: "string", format: "date-time" },
        nonce: { type: "string" },
        tag: { type: "string" },
        alg: { type: "string" },
        components: { type: "array", items: { type: "string" } },
        signature_agent: { type: "string" },
      },
    },
    agent: {
      type: "object",
      required: ["agent_id", "operator_org_id", "status", "verification_level", "fingerprint", "trust_score"],
      properties: {
        agent_id: { type: "string" },
        operator_org_id: { type: "string" },
        status: { type: "string" },
        verification_level: { type: "string" },
        fingerprint: { type: "string" },
        trust_score: { type: "integer" },
      },
    },
    grant: {
      type: "object",
      required: ["live", "agreement_id", "verdict", "reasons"],
      properties: {
        live: { type: "boolean", description: "true when a grant of the agent would ALLOW the payment now" },
        agreement_id: { type: ["string", "null"] },
        verdict: { type: "string", enum: ["ALLOW", "DENY", "STEP_UP"] },
        reasons: { type: "array", items: reason },
      },
    },
  },
} as const;

interface VerifyRequestBody {
  request: HttpRequestLike;
  payment?: ProbePayment;
}

/** Registers the key directory (answered through `directory`) and `POST /v1/agents/verify-request` on `app`. */
export function registerSignedRequests(app: FastifyInstance, directory: KeyDirectoryAnswers): void {
  app.get(
    DIRECTORY_PATH,
    keyListOptions({
      tags: ["registry"],
      summary: "The key directory of registered, active agents (Web Bot Auth), signed by the log key",
      description:
        "A JWKS (application/http-message-signatures-directory+json): each key with kid (RFC 7638 thumbprint, base64url), agent_id and operator_org_id. " +
        "The response carries Content-Digest, Signature-Input and Signature (RFC 9421, tag http-message-signatures-directory, by the key of /.well-known/svc-keys.json). See docs/reference/request-signatures.md.",
      item: {
        type: "object",
        required: ["kty", "crv", "x", "kid", "agent_id", "operator_org_id"],
        additionalProperties: true,
        properties: {
          kty: { type: "string" },
          crv: { type: "string" },
          x: { type: "string" },
          y: { type: "string" },
          kid: { type: "string" },
          agent_id: { type: "string" },
          operator_org_id: { type: "string" },
          verification_level: { type: "string" },
        },
      },
      errors: errorResponses(503),
    }),
    async (request, reply) => {
      const pool = app.requireDb();
      const signer = app.logSigner;
      if (!signer) throw settingNotSet("SVC_LOG_SIGNING_SEED");
      const url = `${request.protocol}://${request.headers.host ?? request.host}${DIRECTORY_PATH}`;
      const { body, fields, signedAtMs } = await directory.answer(url, async () => {
        const now = app.clock();
        const body = JSON.stringify({ keys: (await directoryRows(pool)).map((r) => directoryKey(r)) });
        return { body, fields: await signDirectory(body, { url, signer, now }), signedAtMs: now.getTime() };
      });
      // A kept answer says its age (RFC 9111), so a cache downstream keeps it no longer than its signature lives.
      const age = Math.max(0, Math.floor((app.clock().getTime() - signedAtMs) / 1000));
      void reply
        .headers({ ...fields, "cache-control": `public, max-age=${DIRECTORY_MAX_AGE_SECONDS}`, ...(age > 0 ? { age: String(age) } : {}) })
        .type(DIRECTORY_MEDIA_TYPE);
      return reply.send(body);
    },
  );

  app.post<{ Body: VerifyRequestBody }>(
    "/v1/agents/verify-request",
    {
      schema: {
        tags: ["registry"],
        summary: "Check a request an agent signed (RFC 9421, Web Bot Auth), and whether it could pay now (scope registry:read)",
        description:
          "Who signed (agent, operator, status, trust score), whether the signature is good, fresh and not replayed, and with `payment` whether a live grant " +
          "of the agent would ALLOW it now (evaluated, not spent). Always 200; `verified: false` comes with `reason`. See docs/reference/request-signatures.md.",
        body: BODY_SCHEMA,
        response: { 200: ANSWER_SCHEMA, ...errorResponses(400, 401, 403, 503) },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireScope("registry:read"),
    },
    async (request) => {
      const rt = verifyRuntimeOf(app);
      const { request: signed, payment } = request.body;
      if (!URL.canParse(signed.url)) throw new ApiError("VALIDATION_FAILED", "body/request/url must be an absolute URL");
      if (payment !== undefined) {
        const refused = currencyRefusal(payment.currency);
        if (refused !== undefined) throw new ApiError("VALIDATION_FAILED", `payment.currency ${payment.currency} ${refused}`);
      }
      const pool = app.requireDb();
      return checkSignedRequest({ pool, gather: rt.verify.gather, now: app.clock(), policy: rt.policy }, signed, payment);
    },
  );
}
