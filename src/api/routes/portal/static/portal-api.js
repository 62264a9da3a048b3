// The helpers every signed-in portal page shares (portal.js, the approvals page's approvals.js):
// the session kept in this tab's sessionStorage, one call of the JSON API with it, and a text
// element. Every value from the API is written with textContent, never as HTML.
"use strict";
(() => {
  const SESSION_KEY = "writ.session";

  /** The session ended or was refused (401): sign in again. */
  class SignedOut extends Error {}

  /** One call of the JSON API (relative to the page, so a path prefix works). */
  async function api(method, path, body) {
    const headers = { authorization: "Bearer " + sessionStorage.getItem(SESSION_KEY) };
    if (body !== undefined) headers["content-type"] = "application/json";
    const answer = await fetch(new URL("../" + path, location.href), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
    let data = {};
    try {
      data = await answer.json();
    } catch {
      // An empty or non-JSON answer: its status says enough.
    }
    if (answer.status === 401) throw new SignedOut(data.error || "the session ended");
    if (!answer.ok) throw new Error(data.error || "status " + answer.status);
    return data;
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  window.WritPortal = Object.freeze({
    SignedOut,
    api,
    el,
    /** The tab's session token, or null. */
    session: () => sessionStorage.getItem(SESSION_KEY),
    /** Forgets the tab's session. */
    forget: () => sessionStorage.removeItem(SESSION_KEY),
  });
})();
