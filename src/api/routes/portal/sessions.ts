/**
 * Portal sessions: `POST /v1/sessions {token}` (exchange a sign-in token), `GET /v1/portal/me`
 * and `DELETE /v1/sessions/current` (both with `Authorization: Bearer bps_...`).
 *
 * Promise: an exchange succeeds once per token (unknown, used and expired tokens all answer
 * 401 `{error: "sign-in link is invalid or expired"}`), and yields `{session_token (bps_...),
 * principal_id, expires_at}` with the session lifetime. `me` shows the session's own principal
 * and e-mail; sign-out ends the session for good. A missing, unknown, expired or signed-out
 * session answers 401 `{error: "portal session is missing, invalid or expired"}`. Answers that
 * carry a token or an e-mail are `Cache-Control: no-store`.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { redeemSignInToken, endSession, findSession, type PortalSession } from "../../../store/index.js";
import { ApiError, ERROR_BODY_SCHEMA } from "../../errors.js";
import { passThroughValidator, stringMember } from "./body.js";
import { bearerSessionToken, newSessionToken, tokenHash } from "./credentials.js";

/** The 401 message of a failed exchange. */
export const LINK_INVALID = "sign-in link is invalid or expired";
/** The 401 message of a missing or dead session. */
export const SESSION_INVALID = "portal session is missing, invalid or expired";

const ERRORS = { 400: ERROR_BODY_SCHEMA, 401: ERROR_BODY_SCHEMA, 503: ERROR_BODY_SCHEMA } as const;

/** The session token hash of the request's bearer, or throws the 401. */
function presentedSession(request: FastifyRequest): Buffer {
  const token = bearerSessionToken(request.headers.authorization);
  if (token === null) throw new ApiError("UNAUTHORIZED", SESSION_INVALID);
  return tokenHash(token);
}

/** The live portal session of the request's `Authorization: Bearer bps_...`, or throws the 401. */
export async function requireSession(app: FastifyInstance, request: FastifyRequest): Promise<PortalSession> {
  const session = await findSession(app.requireDb(), presentedSession(request), app.clock());
  if (!session) throw new ApiError("UNAUTHORIZED", SESSION_INVALID);
  return session;
}

/** Registers the session routes. */
export function registerSessions(app: FastifyInstance): void {
  const { sessionTtlSeconds } = app.settings.portal;

  app.post<{ Body: unknown }>(
    "/v1/sessions",
    {
      schema: {
        tags: ["portal"],
        summary: "Exchange a sign-in token for a portal session",
        body: { type: "object", required: ["token"], properties: { token: { type: "string" } } },
        response: {
          200: {
            type: "object",
            required: ["session_token", "principal_id", "expires_at"],
            properties: {
              session_token: { type: "string" },
              principal_id: { type: "string" },
              expires_at: { type: "string", format: "date-time" },
            },
          },
          ...ERRORS,
        },
      },
      validatorCompiler: passThroughValidator,
    },
    async (request, reply) => {
      const pool = app.requireDb();
      const presented = stringMember(request.body, "token");
      const sessionToken = newSessionToken();
      const now = app.clock();
      const expiresAt = new Date(now.getTime() + sessionTtlSeconds * 1000);
      const principalId = await redeemSignInToken(pool, {
        tokenHash: tokenHash(presented),
        now,
        sessionHash: tokenHash(sessionToken),
        sessionExpiresAt: expiresAt,
      });
      if (principalId === null) throw new ApiError("UNAUTHORIZED", LINK_INVALID);
      request.log.info({ principal_id: principalId }, "portal session started");
      void reply.header("cache-control", "no-store");
      return { session_token: sessionToken, principal_id: principalId, expires_at: expiresAt.toISOString() };
    },
  );

  app.get(
    "/v1/portal/me",
    {
      schema: {
        tags: ["portal"],
        summary: "The signed-in principal",
        description: "Authorization: Bearer <session_token> (bps_...).",
        response: {
          200: {
            type: "object",
            required: ["principal_id", "email"],
            properties: { principal_id: { type: "string" }, email: { type: "string" } },
          },
          ...ERRORS,
        },
      },
    },
    async (request, reply) => {
      const session = await requireSession(app, request);
      void reply.header("cache-control", "no-store");
      return { principal_id: session.principalId, email: session.email };
    },
  );

  app.delete(
    "/v1/sessions/current",
    {
      schema: {
        tags: ["portal"],
        summary: "Sign out (ends the presented session)",
        description: "Authorization: Bearer <session_token> (bps_...).",
        response: {
          200: { type: "object", required: ["signed_out"], properties: { signed_out: { type: "boolean", const: true } } },
          ...ERRORS,
        },
      },
    },
    async (request) => {
      const pool = app.requireDb();
      if (!(await endSession(pool, presentedSession(request), app.clock()))) throw new ApiError("UNAUTHORIZED", SESSION_INVALID);
      return { signed_out: true as const };
    },
  );
}
