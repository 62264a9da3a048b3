/**
 * The portal's pages, plain HTML with a small script each and one style sheet, served from
 * ./static/ (read once, at start):
 *
 * - `GET /portal/sign-in` (+ `sign-in.js`): the page a sign-in link opens. Without a token it
 *   asks for a link by e-mail (and, with BUR_DEV_MAILBOX=1, offers the link the dev mailbox
 *   holds for that address). With one, it reads the token from the URL FRAGMENT (`#token=...`),
 *   which browsers never send to a server, so the token never appears in a request line, a
 *   proxy's or this server's request log, or a Referer; it removes the fragment from the address
 *   bar and history at once, and on the user's click (a button, so a mail scanner that opens
 *   links does not spend the single-use token) posts it to `POST /v1/sessions`, keeps the
 *   session token in the tab's sessionStorage (`writ.session`) and opens the portal.
 * - `GET /portal/` (+ `portal.js`; `/portal` redirects there): the principal's agreements with
 *   their state and remaining budget, delegations with a one-click revocation, agents, ledgers,
 *   and sign-out, read from the JSON API with the session (./records.ts).
 * - `GET /portal/portal.css`, and `GET /portal/portal-api.js`: the session and API-call helpers
 *   of every signed-in page (this one's and the approvals page's, src/api/routes/approvals/pages.ts).
 *
 * Every request the pages make is relative to them, so a path prefix in front works. Headers:
 * `Cache-Control: no-store`, `Referrer-Policy: no-referrer`, `X-Content-Type-Options: nosniff`,
 * and a Content-Security-Policy that allows only this origin's script, style and requests (no
 * inline script or style, no framing). Hidden from /openapi.json: they are not API.
 */
import { readFileSync } from "node:fs";
import type { FastifyInstance, FastifyReply } from "fastify";

/** Path of the landing page (sign-in links point here, with `#token=<token>`). */
export const SIGN_IN_PATH = "/portal/sign-in";
/** Path of the portal's main page. */
export const PORTAL_PATH = "/portal/";

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const TYPES = { html: "text/html; charset=utf-8", js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" } as const;

/** The served files: path -> static file. */
const FILES: ReadonlyArray<readonly [string, string]> = [
  [SIGN_IN_PATH, "sign-in.html"],
  [`${SIGN_IN_PATH}.js`, "sign-in.js"],
  [PORTAL_PATH, "portal.html"],
  [`${PORTAL_PATH}portal-api.js`, "portal-api.js"],
  [`${PORTAL_PATH}portal.js`, "portal.js"],
  [`${PORTAL_PATH}portal.css`, "portal.css"],
];

/** The type of a file by its extension. */
export function typeOf(file: string): string {
  return TYPES[file.slice(file.lastIndexOf(".") + 1) as keyof typeof TYPES];
}

/** Serves `body` at `path` (hidden from /openapi.json) with the portal pages' headers. */
export function servePortalFile(app: FastifyInstance, path: string, type: string, body: string): void {
  app.get(path, { schema: { hide: true } }, async (_request, reply) => headers(reply, type).send(body));
}

function headers(reply: FastifyReply, type: string): FastifyReply {
  return reply
    .type(type)
    .header("cache-control", "no-store")
    .header("referrer-policy", "no-referrer")
    .header("x-content-type-options", "nosniff")
    .header("content-security-policy", CSP);
}

/** Registers the pages, their scripts and style sheet. */
export function registerPortalPages(app: FastifyInstance): void {
  for (const [path, file] of FILES) servePortalFile(app, path, typeOf(file), readFileSync(new URL(`./static/${file}`, import.meta.url), "utf8"));
  // Relative, so that it holds behind a path prefix.
  app.get("/portal", { schema: { hide: true } }, async (_request, reply) => reply.redirect("portal/", 302));
}
