/**
 * `GET /`: what is running here and where to go next (the portal, the API's documentation,
 * health, the log's public key). HTML for a browser; JSON `{service, links}` when the request
 * prefers `application/json`. It says nothing a caller could not learn from the listed routes.
 */
import type { FastifyPluginAsync } from "fastify";

/** The links of the landing page, in the order shown. */
export const LANDING_LINKS: ReadonlyArray<{ path: string; title: string }> = [
  { path: "/portal/", title: "Portal: a principal's agents, delegations and agreements (sign in by e-mail link)" },
  { path: "/docs/openapi", title: "API documentation (OpenAPI, interactive)" },
  { path: "/openapi.json", title: "OpenAPI document" },
  { path: "/v1/log/head", title: "Transparency log: the signed tree head" },
  { path: "/.well-known/svc-keys.json", title: "The service's public keys" },
  { path: "/healthz", title: "Liveness" },
  { path: "/readyz", title: "Readiness (database, revocation state)" },
];

const CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function page(metrics: boolean): string {
  const links = [...LANDING_LINKS, ...(metrics ? [{ path: "/metrics", title: "Prometheus metrics" }] : [])];
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Writ</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem}code{font-size:.95em}li{margin:.3rem 0}</style></head>
<body>
<h1>Writ</h1>
<p>Authorization for AI agents that spend money: this is its data plane. Agents call <code>POST /v1/verify</code> with an API key; every answer is ALLOW, DENY or STEP_UP with reason codes.</p>
<ul>
${links.map((l) => `<li><a href="${l.path}">${l.path}</a>: ${l.title}</li>`).join("\n")}
</ul>
</body>
</html>
`;
}

const landingRoutes: FastifyPluginAsync = async (app) => {
  const metrics = app.settings.metricsPort === null;
  const html = page(metrics);
  const links = [...LANDING_LINKS, ...(metrics ? [{ path: "/metrics", title: "Prometheus metrics" }] : [])];
  app.get("/", { schema: { hide: true } }, async (request, reply) => {
    const accept = request.headers.accept ?? "";
    if (/application\/json/.test(accept) && !/text\/html/.test(accept)) return { service: "writ", links };
    return reply
      .type("text/html; charset=utf-8")
      .header("cache-control", "no-store")
      .header("x-content-type-options", "nosniff")
      .header("content-security-policy", CSP)
      .send(html);
  });
};

export default landingRoutes;
