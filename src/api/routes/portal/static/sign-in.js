// The sign-in page (docs/portal.md): asks for a link by e-mail, and exchanges the token of a
// link (in the URL fragment, never sent to a server) for a session kept in sessionStorage.
"use strict";
(() => {
  const SESSION_KEY = "writ.session";
  const $ = (id) => document.getElementById(id);
  const requestForm = $("request-link");
  const email = $("email");
  const send = $("send");
  const form = $("sign-in");
  const button = $("continue");
  const status = $("status");
  const devMailbox = $("dev-mailbox");
  const devLink = $("dev-link");
  let token = null;

  /** POSTs `body` as JSON to `url`, with no cookies and no cache. */
  function post(url, body) {
    return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), credentials: "omit", cache: "no-store" });
  }

  async function json(answer) {
    try {
      return await answer.json();
    } catch {
      return {};
    }
  }

  // With BUR_DEV_MAILBOX=1 the latest link is readable: offer it when it is the one just asked for.
  async function offerDevMailbox(address) {
    try {
      const answer = await fetch(new URL("../v1/dev/mailbox", location.href), { credentials: "omit", cache: "no-store" });
      if (!answer.ok) return;
      const body = await json(answer);
      if (typeof body.link !== "string" || body.email !== address) return;
      devLink.href = body.link;
      devMailbox.hidden = false;
    } catch {
      // No dev mailbox: nothing to offer.
    }
  }

  function showRequestForm() {
    form.hidden = true;
    requestForm.hidden = false;
    if (sessionStorage.getItem(SESSION_KEY)) {
      status.textContent = "You are signed in in this tab. ";
      const open = document.createElement("a");
      open.href = "./";
      open.textContent = "Open your portal";
      status.append(open);
    }
  }

  function start() {
    token = new URLSearchParams(location.hash.slice(1)).get("token");
    // The token leaves the address bar and the history at once.
    if (location.hash) history.replaceState(null, "", location.pathname);
    devMailbox.hidden = true;
    if (!token) {
      showRequestForm();
      return;
    }
    requestForm.hidden = true;
    form.hidden = false;
    button.disabled = false;
    status.textContent = "";
    button.focus();
  }

  requestForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const address = email.value.trim().toLowerCase();
    send.disabled = true;
    status.textContent = "Sending...";
    try {
      const answer = await post(new URL("../v1/portal/magic-link", location.href), { email: address });
      const body = await json(answer);
      status.textContent = answer.ok
        ? "If " + address + " can sign in, a sign-in link is on its way. Open it in this browser."
        : "The link could not be sent: " + (body.error || "status " + answer.status) + ".";
      if (answer.ok) await offerDevMailbox(address);
    } catch {
      status.textContent = "The service could not be reached. Try again.";
    } finally {
      send.disabled = false;
    }
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!token) return;
    button.disabled = true;
    status.textContent = "Signing in...";
    try {
      const answer = await post(new URL("../v1/sessions", location.href), { token });
      const body = await json(answer);
      if (!answer.ok) {
        status.textContent = "Sign-in failed: " + (body.error || "the service refused the link") + ". Ask for a new link.";
        token = null;
        showRequestForm();
        return;
      }
      sessionStorage.setItem(SESSION_KEY, body.session_token);
      status.textContent = "Signed in as " + body.principal_id + ". The session lasts until " + new Date(body.expires_at).toLocaleString() + ". Opening your portal...";
      location.replace(new URL("./", location.href));
    } catch {
      status.textContent = "The service could not be reached. Try again.";
      button.disabled = false;
    }
  });

  // A link opened in a tab that shows this page already changes only the fragment.
  window.addEventListener("hashchange", start);
  start();
})();
