// The principal's approvals page (docs/reference/approvals.md): registers a passkey and
// approves or declines a payment with it. The WebAuthn challenge of a decision is computed by
// the service from the approval's content and the decision, so the passkey signs exactly the
// text shown here. The session and the API calls are the portal's (portal-api.js). Every value
// from the API is written with textContent, never as HTML.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const status = $("status");
  const { SignedOut, api, el } = window.WritPortal;
  const { startRegistration, startAuthentication } = window.SimpleWebAuthnBrowser;

  /** Why a call failed; an ended session also shows the sign-in link. */
  function failed(what, e) {
    if (e instanceof SignedOut) $("signed-out").hidden = false;
    status.textContent = what + ": " + e.message;
  }

  async function decide(a, decision) {
    try {
      status.textContent = decision === "approve" ? "Confirm with your passkey to approve…" : "Confirm with your passkey to decline…";
      const optionsJSON = await api("POST", "v1/portal/approvals/" + a.approval_id + "/options", { decision });
      const response = await startAuthentication({ optionsJSON });
      const done = await api("POST", "v1/portal/approvals/" + a.approval_id + "/passkey-decision", { decision, response });
      status.textContent = "Approval " + done.approval_id + " is " + done.status + " (transparency log entry " + done.log_sequence + ").";
    } catch (e) {
      failed("Not decided", e);
    }
    await load();
  }

  function item(a) {
    const li = el("li", undefined, "approval");
    li.id = a.approval_id;
    if (location.hash === "#" + a.approval_id) li.classList.add("focus");
    li.append(el("blockquote", a.confirmation_text, "confirmation"));
    const facts = [
      a.amount + " " + a.currency,
      a.merchant ? "at " + a.merchant : "",
      "agent " + a.agent_id,
      "agreement " + a.agreement_id,
      a.status === "pending" ? "until " + a.expires_at : a.status,
    ].filter(Boolean);
    li.append(el("p", facts.join(" · "), "hint"));
    if (a.status === "pending") {
      const approve = el("button", "Approve");
      approve.type = "button";
      approve.setAttribute("aria-label", "Approve " + a.approval_id);
      approve.addEventListener("click", () => decide(a, "approve"));
      const decline = el("button", "Decline", "secondary");
      decline.type = "button";
      decline.setAttribute("aria-label", "Decline " + a.approval_id);
      decline.addEventListener("click", () => decide(a, "decline"));
      li.append(approve, decline);
    } else {
      li.append(el("p", "State: " + a.status + (a.used ? " (paid)" : ""), "state"));
    }
    return li;
  }

  async function load() {
    const data = await api("GET", "v1/portal/approvals");
    $("who").textContent = "Signed in (" + data.principal_id + ")";
    $("passkeys").textContent =
      data.passkeys === 0
        ? "You have no passkey yet: register one to approve payments."
        : "You have " + data.passkeys + " passkey" + (data.passkeys === 1 ? "" : "s") + ".";
    const list = $("approvals");
    list.replaceChildren(...data.approvals.map(item));
    if (data.approvals.length === 0) list.append(el("li", "Nothing waits for you."));
    $("content").hidden = false;
  }

  $("register").addEventListener("click", async () => {
    try {
      const optionsJSON = await api("POST", "v1/portal/passkeys/options");
      const response = await startRegistration({ optionsJSON });
      await api("POST", "v1/portal/passkeys", { response });
      status.textContent = "Your passkey is registered.";
    } catch (e) {
      failed("No passkey registered", e);
    }
    await load();
  });

  // An approval URL opened in this tab changes only the fragment: show it.
  window.addEventListener("hashchange", () => {
    load().catch((e) => failed("Cannot load your approvals", e));
  });

  if (!window.WritPortal.session()) {
    $("signed-out").hidden = false;
    return;
  }
  load().catch((e) => failed("Cannot load your approvals", e));
})();
