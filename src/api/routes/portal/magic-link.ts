/**
 * `POST /v1/portal/magic-link {email}`: sends a sign-in link.
 *
 * Promise: the answer is 200 `{sent: true}` for every body that is a JSON object with a string
 * `email` (known, unknown or implausible address alike, rate-limited or not) and 400 otherwise;
 * 503 without storage. A plausible address (see credentials.ts) within the rate limits gets a
 * new single-use token, stored only as its hash with the link lifetime, and creates its
 * principal when new; known and unknown addresses do the same work (one statement, then an
 * in-memory hand-over to the courier). An implausible address is ignored. The answer never
 * waits on mail delivery and never contains the address.
 *
 * The link: `<public base URL>/portal/sign-in#token=<token>` (./pages.ts). The token is in
 * the FRAGMENT, which browsers never send, so no request log ever holds it. The base is
 * WRIT_PUBLIC_BASE_URL, else the address this server listens on (never the request's Host
 * header: a requester could point a victim's link at its own server).
 *
 * Rate limits (@fastify/rate-limit, in this process's memory, fixed windows of
 * BUR_MAGIC_LINK_WINDOW_SECONDS): at most BUR_MAGIC_LINK_PER_CLIENT requests per client address
 * and BUR_MAGIC_LINK_PER_ADDRESS links per e-mail address. A request over either limit still
 * answers `{sent: true}` (the spec: "always") but stores and sends nothing.
 */
import type { AddressInfo } from "node:net";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { issueSignInToken } from "../../../store/index.js";
import { errorResponses } from "../../errors.js";
import { passThroughValidator, stringMember } from "./body.js";
import type { SignInCourier } from "./courier.js";
import { newPrincipalId, newSignInToken, normalizeEmail, tokenHash } from "./credentials.js";
import { SIGN_IN_PATH } from "./pages.js";

/** The sign-in link for a token: `<base>/portal/sign-in#token=<token>`. */
export function signInLink(baseUrl: string, token: string): string {
  return `${baseUrl}${SIGN_IN_PATH}#token=${token}`;
}

/** The base URL of the address a server listens on (a wildcard address is reached on loopback). */
export function listeningBaseUrl(address: AddressInfo | string | null): string {
  if (address === null || typeof address === "string") return "http://127.0.0.1";
  const host = address.address === "0.0.0.0" ? "127.0.0.1" : address.address === "::" ? "::1" : address.address;
  return `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;
}

/** Decides whether a magic-link request may send a link (both limits of the module comment). */
type LinkLimiter = (request: FastifyRequest) => Promise<boolean>;

function linkLimiter(app: FastifyInstance): LinkLimiter {
  const { linksPerAddress, linksPerClient, linkWindowSeconds } = app.settings.portal;
  const timeWindow = linkWindowSeconds * 1000;
  const perClient = app.createRateLimit({ max: linksPerClient, timeWindow, keyGenerator: (req) => `client:${req.ip}` });
  // Keyed by the address's SHA-256: the limiter's memory holds no e-mail address.
  const perAddress = app.createRateLimit({
    max: linksPerAddress,
    timeWindow,
    keyGenerator: (req) => `address:${tokenHash(normalizeEmail(stringMember(req.body, "email")) ?? "").toString("hex")}`,
  });
  const exceeded = (r: Awaited<ReturnType<typeof perClient>>) => !r.isAllowed && r.isExceeded;
  return async (request) => !exceeded(await perClient(request)) && !exceeded(await perAddress(request));
}

/** Registers the magic-link route (the rate-limit plugin must be registered on `app`). */
export function registerMagicLink(app: FastifyInstance, courier: SignInCourier): void {
  const { publicBaseUrl, magicLinkTtlSeconds } = app.settings.portal;
  const allowed = linkLimiter(app);
  app.post<{ Body: unknown }>(
    "/v1/portal/magic-link",
    {
      schema: {
        tags: ["portal"],
        summary: "Send a portal sign-in link",
        description:
          "Always answers {sent: true} for a body {email: string}, whether or not the address is known and whether or not " +
          "a rate limit held the link back; a new address creates a new principal. The link is " +
          "`<WRIT_PUBLIC_BASE_URL>/portal/sign-in#token=<token>`, single use, valid for BUR_MAGIC_LINK_TTL_SECONDS.",
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
      if (!(await allowed(request))) {
        request.log.info("sign-in link held back by a rate limit");
        return { sent: true as const };
      }
      const token = newSignInToken();
      const now = app.clock();
      await issueSignInToken(pool, {
        email,
        newPrincipalId: newPrincipalId(),
        tokenHash: tokenHash(token),
        expiresAt: new Date(now.getTime() + magicLinkTtlSeconds * 1000),
      });
      const base = publicBaseUrl ?? listeningBaseUrl(app.server.address());
      courier.dispatch({ email, link: signInLink(base, token), token, sent_at: now.toISOString() });
      return { sent: true as const };
    },
  );
}
