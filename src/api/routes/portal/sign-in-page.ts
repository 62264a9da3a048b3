/**
 * The page a sign-in link opens: `GET /portal/sign-in` (HTML) and its script
 * `GET /portal/sign-in.js`. A minimal, plain page (the full portal UI comes later): it reads the
 * token from the URL FRAGMENT (`#token=...`), which browsers never send to a server, so the token
 * never appears in a request line, a proxy's or this server's request log, or a Referer; it
 * removes the fragment from the address bar and history at once, and on the user's click (a
 * button, so a mail scanner that opens links does not spend the single-use token) posts it to
 * `POST /v1/sessions` and shows the outcome in a live region. The session token is kept in the
 * tab's sessionStorage (`writ.session`).
 *
 * Both answers are static. Headers: `Cache-Control: no-store`, `Referrer-Policy: no-referrer`,
 * `X-Content-Type-Options: nosniff`, and a Content-Security-Policy that allows only this
 * origin's script and requests (no inline script, no framing).
 */
import type { FastifyInstance, FastifyReply } from "fastify";

/** Path of the landing page (sign-in links point here, with `#token=<token>`). */
export const SIGN_IN_PATH = "/portal/sign-in";

const CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sign in to Writ</title>
<script src="sign-in.js" defer></script>
</head>
<body>
<main aria-labelledby="title">
<h1 id="title">Sign in to Writ</h1>
<form id="sign-in" aria-describedby="about">
<p id="about">You opened a sign-in link. Continue to start a portal session in this browser tab. The link works once.</p>
<button id="continue" type="submit">Continue signing in</button>
</form>
<p id="status" role="status" aria-live="polite"></p>
<noscript><p>This page needs JavaScript to exchange the sign-in link for a session.</p></noscript>
</main>
</body>
</html>
`;

const SCRIPT = `"use strict";
(() => {
  const form = document.getElementById("sign-in");
  const button = document.getElementById("continue");
  const status = document.getElementById("status");
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  // The token leaves the address bar and the history at once.
  history.replaceState(null, "", location.pathname);
  if (!token) {
    status.textContent = "This sign-in link is incomplete. Ask for a new link.";
    button.disabled = true;
    return;
  }
  button.focus();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    status.textContent = "Signing in...";
    try {
      const answer = await fetch(new URL("../v1/sessions", location.href), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token }),
        credentials: "omit",
        cache: "no-store",
      });
      const body = await answer.json();
      if (!answer.ok) {
        status.textContent = "Sign-in failed: " + (body.error || "the service refused the link") + ". Ask for a new link.";
        return;
      }
      sessionStorage.setItem("writ.session", body.session_token);
      status.textContent = "Signed in as " + body.principal_id + ". The session lasts until " + new Date(body.expires_at).toLocaleString() + ".";
    } catch {
      status.textContent = "The service could not be reached. Try again.";
      button.disabled = false;
    }
  });
})();
`;

function headers(reply: FastifyReply, type: string): FastifyReply {
  return reply
    .type(type)
    .header("cache-control", "no-store")
    .header("referrer-policy", "no-referrer")
    .header("x-content-type-options", "nosniff")
    .header("content-security-policy", CSP);
}

/** Registers the landing page and its script (hidden from /openapi.json: they are not API). */
export function registerSignInPage(app: FastifyInstance): void {
  app.get(SIGN_IN_PATH, { schema: { hide: true } }, async (_request, reply) => headers(reply, "text/html; charset=utf-8").send(PAGE));
  app.get(`${SIGN_IN_PATH}.js`, { schema: { hide: true } }, async (_request, reply) => headers(reply, "text/javascript; charset=utf-8").send(SCRIPT));
}
