/**
 * The portal's approvals page (`GET /portal/approvals`, + `approvals.js`, `approvals.css` and
 * `webauthn.js`, the UMD bundle of @simplewebauthn/browser from node_modules), served as the
 * other portal pages are (src/api/routes/portal/pages.ts: no-store, no referrer, nosniff and a
 * CSP that allows only this origin's script, style and requests), with their `portal.css` and
 * `portal-api.js` (the session and the API calls). An
 * approval URL is `/portal/approvals#<approval_id>`; the page signs in through the portal's
 * own sign-in page (session in the tab's sessionStorage).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyInstance } from "fastify";
import { servePortalFile, typeOf } from "../portal/pages.js";

function webauthnBundle(): string {
  // The package's exports name no bundle: find it beside its CommonJS entry (script/index.js).
  const entry = createRequire(import.meta.url).resolve("@simplewebauthn/browser");
  return readFileSync(join(dirname(entry), "..", "dist", "bundle", "index.umd.min.js"), "utf8");
}

/** Registers the approvals page and its files. */
export function registerApprovalPages(app: FastifyInstance, path: string): void {
  const dir = path.slice(0, path.lastIndexOf("/") + 1);
  const files: Array<[string, string, string]> = [
    [path, typeOf(".html"), readFileSync(new URL("./static/approvals.html", import.meta.url), "utf8")],
    [`${dir}approvals.js`, typeOf(".js"), readFileSync(new URL("./static/approvals.js", import.meta.url), "utf8")],
    [`${dir}approvals.css`, typeOf(".css"), readFileSync(new URL("./static/approvals.css", import.meta.url), "utf8")],
    [`${dir}webauthn.js`, typeOf(".js"), webauthnBundle()],
  ];
  for (const [p, type, body] of files) servePortalFile(app, p, type, body);
}
