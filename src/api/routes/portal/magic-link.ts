/**
 * `POST /v1/portal/magic-link {email}`: sends a sign-in link.
 *
 * Promise: the answer is 200 `{sent: true}` for every body that is a JSON object with a string
 * `email` (known, unknown or implausible address alike) and 400 otherwise; 503 without storage.
 * A plausible address (see credentials.ts) gets a new single-use token, stored only as its
 * hash with the link lifetime, and creates its principal when new; known and unknown addresses
 * do the same work (one statement, then an in-memory hand-over to the courier). An implausible
 * address is ignored. The answer never waits on mail delivery and never contains the address.
 */
import type { FastifyInstance } from "fastify";
import { issueSignInToken } from "../../../store/portal.js";
import { errorResponses } from "../../errors.js";
import { passThroughValidator, stringMember } from "./body.js";
import type { SignInCourier } from "./courier.js";
import { newPrincipalId, newSignInToken, normalizeEmail, tokenHash } from "./credentials.js";

/** The sign-in link for a token: `<BUR_PORTAL_URL>/portal/sign-in?token=<token>`. */
export function signInLink(portalUrl: string, token: string): string {
  return `${portalUrl}/portal/sign-in?token=${token}`;
}

/** Registers the magic-link route. */
export function registerMagicLink(app: FastifyInstance, courier: SignInCourier): void {
  const { portalUrl, magicLinkTtlSeconds } = app.settings.portal;
  app.post<{ Body: unknown }>(
    "/v1/portal/magic-link",
    {
      schema: {
        tags: ["portal"],
        summary: "Send a portal sign-in link",
        description:
          "Always answers {sent: true} for a body {email: string}, whether or not the address is known; a new address " +
          "creates a new principal. The link is `<BUR_PORTAL_URL>/portal/sign-in?token=<token>`, single use, " +
          "valid for BUR_MAGIC_LINK_TTL_SECONDS.",
        body: { type: "object", required: ["email"], properties: { email: { type: "string" } } },
        response: {
          200: { type: "object", required: ["sent"], properties: { sent: { type: "boolean", const: true } } },
          ...errorResponses(400, 503),
        },
      },
      validatorCompiler: passThroughValidator,
    },
    async (request) => {
      const pool = app.requireDb();
      const email = normalizeEmail(stringMember(request.body, "email"));
      if (email === null) return { sent: true as const };
      const token = newSignInToken();
      const now = app.clock();
      await issueSignInToken(pool, {
        email,
        newPrincipalId: newPrincipalId(),
        tokenHash: tokenHash(token),
        expiresAt: new Date(now.getTime() + magicLinkTtlSeconds * 1000),
      });
      courier.dispatch({ email, link: signInLink(portalUrl, token), token, sent_at: now.toISOString() });
      return { sent: true as const };
    },
  );
}
