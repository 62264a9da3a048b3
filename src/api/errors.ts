/**
 * The one error registry of the HTTP API: a closed union of error codes, each with its HTTP
 * status and default message (the spec's exact text where the spec quotes one).
 *
 * Promise: every error a route throws or Fastify raises is answered as `{error: string}` by
 * `errorHandler`; nothing else ever reaches the client (no stack, no driver message). Route
 * code throws `new ApiError(code)` or `new ApiError(code, message)`; it never sets statuses by
 * hand. To add an error, add a code here.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { isDataException, isDbUnavailable, isUnstorableText } from "../store/index.js";

/** Every API error code with its status and default message. */
export const API_ERRORS = {
  // 400
  VALIDATION_FAILED: { status: 400, message: "request is not valid" },
  MALFORMED_JSON: { status: 400, message: "request body is not valid JSON" },
  EMPTY_JSON_BODY: { status: 400, message: "request body is empty but content-type is application/json" },
  BODY_NOT_OBJECT: { status: 400, message: "request body must be a JSON object" },
  BODY_TOO_COMPLEX: { status: 400, message: "request body nests arrays and objects too deeply or holds too many of them" },
  LOG_APPEND_INVALID: { status: 400, message: "log append needs kind and a body object" },
  LOG_KIND_REJECTED: { status: 400, message: "log entry kind is not accepted" },
  LOG_SIZES_OUT_OF_ORDER: { status: 400, message: "consistency proof needs 1 <= first <= second" },
  TEXT_NOT_STORABLE: { status: 400, message: "text must not contain NUL or unrepresentable characters" },
  VALUE_NOT_STORABLE: { status: 400, message: "a value of the request cannot be stored" },
  // 401
  UNAUTHORIZED: { status: 401, message: "authorization required" },
  PUSH_NOT_VERIFIED: { status: 401, message: "revocation push did not verify" },
  APPEND_TOKEN_MISMATCH: { status: 401, message: "append token does not match" },
  APPROVAL_NOT_VERIFIED: { status: 401, message: "approval signature did not verify" },
  // 403
  FORBIDDEN: { status: 403, message: "forbidden" },
  DEMO_SEED_DISABLED: { status: 403, message: "demo seed is disabled" },
  // 404
  NOT_FOUND: { status: 404, message: "not found" },
  ROUTE_NOT_FOUND: { status: 404, message: "route not found" },
  LOG_ENTRY_NOT_FOUND: { status: 404, message: "log entry was not found" },
  TREE_HEAD_NOT_FOUND: { status: 404, message: "the transparency log has no signed tree head" },
  LOG_TREE_SIZE_NOT_FOUND: { status: 404, message: "tree size is beyond the latest signed tree head" },
  // 405, 409, 413, 415, 429
  METHOD_NOT_ALLOWED: { status: 405, message: "method not allowed" },
  CONFLICT: { status: 409, message: "conflict" },
  BODY_TOO_LARGE: { status: 413, message: "request body is too large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: "unsupported content type: send application/json" },
  RATE_LIMITED: { status: 429, message: "too many requests" },
  // Registry (bureau): credentials, organizations, keys, agents, reports (docs/registry.md)
  BEARER_REQUIRED: { status: 401, message: "bearer token required" },
  TOKEN_UNKNOWN: { status: 401, message: "bearer token is not recognized" },
  KEY_REVOKED: { status: 401, message: "API key is revoked" },
  ADMIN_REQUIRED: { status: 403, message: "admin token required" },
  ORG_KEY_REQUIRED: { status: 403, message: "an organization API key is required" },
  SCOPE_MISSING: { status: 403, message: "API key lacks the required scope" },
  SCOPE_NOT_HELD: { status: 403, message: "a key cannot grant a scope it does not hold" },
  REVOKE_SCOPE_NOT_HELD: { status: 403, message: "a key cannot revoke a key holding a scope it does not hold" },
  AGENT_NOT_OWNED: { status: 403, message: "agent belongs to another organization" },
  SCOPES_REJECTED: { status: 400, message: "scopes are not valid for this organization" },
  PUBLIC_KEY_INVALID: { status: 400, message: "public_key must be an Ed25519 or P-256 public JWK" },
  WEBHOOK_URL_REJECTED: { status: 400, message: "webhook_url must be https, or http on localhost" },
  ORG_NOT_FOUND: { status: 404, message: "organization was not found" },
  KEY_NOT_FOUND: { status: 404, message: "API key was not found" },
  AGENT_NOT_FOUND: { status: 404, message: "agent was not found" },
  SUBSCRIPTION_NOT_FOUND: { status: 404, message: "subscription was not found" },
  SUBSCRIPTION_CAP_REACHED: { status: 409, message: "organization reached its subscription cap" },
  // Rates and the demo check (docs/fx.md, docs/demo.md)
  FX_QUERY_INVALID: { status: 400, message: "fx query is not valid" },
  FX_RATE_NOT_FOUND: { status: 404, message: "no rate for the currency on the day" },
  DEMO_CHECK_INVALID: { status: 400, message: "demo check amount or currency is unusable" },
  AGENT_ID_TAKEN: { status: 409, message: "agent id is already registered" },
  AGENT_KEY_TAKEN: { status: 409, message: "agent public key is already registered" },
  AGENT_KEY_PROOF_INVALID: { status: 400, message: "key_proof does not prove possession of public_key" },
  AGENT_DISPLACED: { status: 409, message: "agent was displaced by a proven registration of its key and cannot be made active" },
  AGENT_RETIRED: { status: 409, message: "agent is retired and cannot change status" },
  REPORT_DUPLICATE: { status: 409, message: "report duplicates one already filed" },
  REPORT_CAP_REACHED: { status: 429, message: "organization reached its daily report cap" },
  // Verify, outcomes and delegation revocation (docs/verify.md)
  VERIFY_ACTION_REUSED: { status: 409, message: "action_id was already used by a different request" },
  APPROVAL_NOT_PENDING: { status: 409, message: "approval is no longer pending" },
  PASSKEY_EXISTS: { status: 409, message: "passkey is already registered" },
  VERIFY_ACTION_RELEASED: { status: 409, message: "action_id was allowed and then recorded as failed; send a new action_id" },
  VERIFY_PROPOSED_AT_SKEW: { status: 400, message: "action.proposed_at is too far from the service clock" },
  AGREEMENT_NOT_FOUND: { status: 404, message: "agreement was not found" },
  RECORD_ID_AMBIGUOUS: { status: 409, message: "the id names records of several agents; name agent_id" },
  ACTION_NOT_RECORDED: { status: 404, message: "action is not recorded as allowed in the agreement's ledger" },
  OUTCOME_NOT_ALLOWED: { status: 409, message: "outcome cannot follow the action's current outcome" },
  OUTCOME_AMOUNT_INVALID: { status: 400, message: "amount is not usable in the action's currency" },
  CAPTURE_EXCEEDS_HOLD: { status: 409, message: "capture exceeds what is left of the hold" },
  REFUND_EXCEEDS_CAPTURED: { status: 409, message: "refund exceeds what was captured and not yet refunded" },
  STEP_CONFLICT: { status: 409, message: "idempotency_key was already used for another step of the action" },
  DELEGATION_NOT_FOUND: { status: 404, message: "delegation was not found" },
  APPROVAL_NOT_FOUND: { status: 404, message: "approval was not found" },
  DELEGATION_NOT_REVOCABLE: { status: 409, message: "delegation is not revocable" },
  DELEGATION_REVOCATION_INVALID: { status: 401, message: "delegation revocation did not verify" },
  // Payment mandates and issuer keys (docs/mandates.md)
  MANDATE_REFUSED: { status: 400, message: "mandate refused" },
  ISSUER_KEYS_WALLET_ONLY: { status: 403, message: "issuer keys are registered by wallet organizations" },
  ISSUER_KEY_NOT_FOUND: { status: 404, message: "issuer key was not found" },
  ISSUER_KEY_PROOF_INVALID: { status: 400, message: "key_proof does not prove possession of public_key" },
  ISSUER_KEY_TAKEN: { status: 409, message: "issuer key is already registered" },
  // Acknowledgement keys of payment-side organizations (docs/verify.md, "Who records outcomes")
  ACK_KEYS_PAYMENT_SIDE_ONLY: { status: 403, message: "acknowledgement keys are registered by payment-side organizations" },
  ACK_KEY_NOT_FOUND: { status: 404, message: "acknowledgement key was not found" },
  ACK_KEY_TAKEN: { status: 409, message: "acknowledgement key is already registered by this organization" },
  REVOCATION_NOT_VERIFIED: { status: 422, message: "principal revocation did not verify" },
  // 5xx
  INTERNAL: { status: 500, message: "internal error" },
  KEY_LOAD_FAILED: { status: 500, message: "a configured key failed to load" },
  UPSTREAM_FAILED: { status: 502, message: "upstream did not answer" },
  FX_SOURCE_FAILED: { status: 502, message: "FX source did not answer" },
  DATABASE_NOT_CONFIGURED: { status: 503, message: "DATABASE_URL is not set" },
  DATABASE_UNAVAILABLE: { status: 503, message: "database unavailable" },
  SETTING_NOT_SET: { status: 503, message: "a required setting is not set" },
  REVOCATIONS_NOT_LOADED: { status: 503, message: "revocation index not loaded yet" },
  REVOCATIONS_STALE: { status: 503, message: "revocation state is stale: verify steps up (REVOCATION_STATE_STALE)" },
  SHUTTING_DOWN: { status: 503, message: "server is shutting down" },
} as const satisfies Record<string, { status: number; message: string }>;

/** The closed union of API error codes. */
export type ApiErrorCode = keyof typeof API_ERRORS;

/** An error a route throws to answer `{error: message}` with the code's status. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  /** HTTP status of the code. */
  readonly statusCode: number;
  constructor(
    readonly code: ApiErrorCode,
    message?: string,
  ) {
    super(message ?? API_ERRORS[code].message);
    this.statusCode = API_ERRORS[code].status;
  }
}

/** JSON schema of every error body, for route `response` schemas (and /openapi.json). */
export const ERROR_BODY_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string" } },
} as const;

/** Route `response` schemas: `{error}` for each of `statuses`. */
export function errorResponses<S extends number>(...statuses: S[]): Record<S, typeof ERROR_BODY_SCHEMA> {
  return Object.fromEntries(statuses.map((s) => [s, ERROR_BODY_SCHEMA])) as Record<S, typeof ERROR_BODY_SCHEMA>;
}

/** The 503 `{error: "<NAME> is not set"}` for an unset setting. */
export function settingNotSet(name: string): ApiError {
  return new ApiError("SETTING_NOT_SET", `${name} is not set`);
}

/** Fastify's own error codes, mapped onto ours. */
const FASTIFY_CODES: Readonly<Record<string, ApiErrorCode>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: "MALFORMED_JSON",
  FST_ERR_CTP_EMPTY_JSON_BODY: "EMPTY_JSON_BODY",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_BODY_TOO_LARGE: "BODY_TOO_LARGE",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "VALIDATION_FAILED",
};

/** What the client receives for an error: status and `{error}` body. */
export function toResponse(err: unknown): { status: number; error: string; logAsError: boolean } {
  // Thrown ApiErrors are expected answers (a 503 for an unset setting is not a fault of the
  // request being served); only INTERNAL is logged as an error.
  if (err instanceof ApiError) return { status: err.statusCode, error: err.message, logAsError: err.code === "INTERNAL" };
  const fe = err as Partial<FastifyError> & { validation?: unknown };
  if (fe && typeof fe === "object" && fe.validation) {
    // Fastify's validation message names the part and the field: "body/at must be string".
    return { status: 400, error: typeof fe.message === "string" ? fe.message : API_ERRORS.VALIDATION_FAILED.message, logAsError: false };
  }
  const mapped = typeof fe?.code === "string" ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) return { status: API_ERRORS[mapped].status, error: API_ERRORS[mapped].message, logAsError: false };
  if (isDbUnavailable(err)) return { status: 503, error: API_ERRORS.DATABASE_UNAVAILABLE.message, logAsError: true };
  if (isUnstorableText(err)) return { status: 400, error: API_ERRORS.TEXT_NOT_STORABLE.message, logAsError: false };
  if (isDataException(err)) return { status: 400, error: API_ERRORS.VALUE_NOT_STORABLE.message, logAsError: false };
  // Other Fastify 4xx errors (bad URL, ...) carry safe, library-written messages; anything else
  // is internal and its message never leaves the process.
  const status = typeof fe?.statusCode === "number" ? fe.statusCode : 500;
  if (status >= 400 && status < 500 && typeof fe?.code === "string" && fe.code.startsWith("FST_")) {
    return { status, error: String(fe.message), logAsError: false };
  }
  return { status: 500, error: API_ERRORS.INTERNAL.message, logAsError: true };
}

/** The one error handler: logs server-side, answers `{error}`. */
export function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const r = toResponse(err);
  if (r.logAsError) request.log.error({ err }, "request failed");
  else request.log.debug({ err }, "request rejected");
  void reply.code(r.status).type("application/json; charset=utf-8").send({ error: r.error });
}

/** The one not-found handler: 404 `{error: "route not found"}`. */
export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply): void {
  void reply.code(404).type("application/json; charset=utf-8").send({ error: API_ERRORS.ROUTE_NOT_FOUND.message });
}
