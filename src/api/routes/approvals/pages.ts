/**
 * The portal's approvals page (`GET /portal/approvals`, + `approvals.js`, `approvals.css` and
 * `webauthn.js`, the UMD bundle of @simplewebauthn/browser from node_modules), served with the
 * same headers as the other portal pages (src/api/routes/portal/pages.ts): no-store, no
 * referrer, nosniff and a CSP that allows only this origin's script, style and requests. An
 * approval URL is `/portal/approvals#<approval_id>`; the page signs in through the portal's
 * own sign-in page (session in the tab's sessionStorage).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyInstance } from "fastify";

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function webauthnBundle(): string {
  // The package's exports name no bundle: find it beside its CommonJS entry (script/index.js).
  const entry = createRequire(import.meta.url).resolve("@simplewebauthn/browser");
  return readFileSync(join(dirname(entry), "..", "dist", "bundle", "index.umd.min.js"), "utf8");
}

/** Registers the approvals page and its files. */
export function registerApprovalPages(app: FastifyInstance, path: string): void {
  const dir = path.slice(0, path.lastIndexOf("/") + 1);
  const files: Array<[string, string, string]> = [
    [path, "text/html; charset=utf-8", readFileSync(new URL("./static/approvals.html", import.meta.url), "utf8")],
    [`${dir}approvals.js`, "text/javascript; charset=utf-8", readFileSync(new URL("./static/approvals.js", import.meta.url), "utf8")],
    [`${dir}approvals.css`, "text/css; charset=utf-8", readFileSync(new URL("./static/approvals.css", import.meta.url), "utf8")],
    [`${dir}webauthn.js`, "text/javascript; charset=utf-8", webauthnBundle()],
  ];
  for (const [p, type, body] of files) {
    app.get(p, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .type(type)
        .header("cache-control", "no-store")
        .header("referrer-policy", "no-referrer")
        .header("x-content-type-options", "nosniff")
        .header("content-security-policy", CSP)
        .send(body),
    );
  }
}
