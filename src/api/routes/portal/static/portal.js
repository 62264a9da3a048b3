// The principal's portal (docs/portal.md): reads the signed-in principal's agreements,
// delegations, agents and ledgers from the JSON API with the session token kept in this tab's
// sessionStorage (portal-api.js), revokes a delegation with one click, and signs out. Every
// value from the API is written with textContent, never as HTML.
"use strict";
(() => {
  const { SignedOut, api, el } = window.WritPortal;
  const LEDGER_PAGE = 50;
  const $ = (id) => document.getElementById(id);
  const status = $("status");
  const records = $("records");
  const signOutButton = $("sign-out");
  let ledgerOf = null;
  let ledgerAfter = 0;

  /** A row; each cell carries its column's heading (data-label), which a narrow screen shows beside it. */
  function row(tbody, cells) {
    const tr = document.createElement("tr");
    tr.setAttribute("role", "row"); // a narrow screen shows rows as blocks: keep them a table's rows for screen readers
    const headings = Array.from(tbody.parentElement.tHead.rows[0].cells, (th) => th.textContent);
    for (const [i, c] of cells.entries()) {
      const td = document.createElement("td");
      td.dataset.label = headings[i] || "";
      td.setAttribute("role", "cell");
      if (c instanceof Node) td.append(c);
      else td.textContent = c === undefined || c === null ? "" : String(c);
      tr.append(td);
    }
    tbody.append(tr);
    return tr;
  }

  function empty(tbody, columns, text) {
    const tr = document.createElement("tr");
    const td = el("td", text, "empty");
    td.colSpan = columns;
    tr.append(td);
    tbody.append(tr);
  }

  function when(iso) {
    const t = Date.parse(iso);
    return Number.isNaN(t) ? "" : new Date(t).toLocaleString();
  }

  /** A state label; a grant past its expiry shows as expired (expiry is enforced at evaluation time). */
  function stateOf(status, expiresAt, revocation) {
    const expired = status === "active" && typeof expiresAt === "string" && Date.parse(expiresAt) <= Date.now();
    const name = expired ? "expired" : status;
    const label = el("span", name, "state state-" + name);
    if (!revocation) return label;
    const wrap = el("span");
    wrap.append(label, el("span", " by " + (revocation.by || "?") + ", " + when(revocation.at)));
    return wrap;
  }

  const isZero = (amount) => amount === undefined || /^0(\.0*)?$/.test(amount);

  /**
   * "487.50 of 500.00 USD left, 12.50 spent (10.00 captured, 2.50 held, not captured yet), at most
   * 50.00 a payment; today in Europe/Berlin: ...": the split shows while part of the spend is on hold.
   */
  function budgetText(line, recurrence) {
    const parts = [];
    if (recurrence) parts.push(recurrenceText(recurrence));
    const split = isZero(line.held) ? "" : " (" + line.captured + " captured, " + line.held + " held, not captured yet)";
    if (line.remaining !== undefined) parts.push(line.remaining + " of " + line.limit + " " + line.currency + " left" + (split ? ", " + line.spent + " spent" + split : ""));
    else if (line.spent !== undefined) parts.push(line.spent + " " + line.currency + " spent" + split + ", no total limit");
    else parts.push(line.currency + ": spend unknown");
    if (line.maximum_amount !== undefined) parts.push("at most " + line.maximum_amount + " a payment");
    // Each window after a semicolon: its own parts are separated by commas (and a time may hold one).
    return [parts.join(", "), ...(line.periods || []).map((p) => periodText(p, line.currency))].join("; ");
  }

  const PERIOD_NAMES = { day: "today", week: "this week", month: "this month", quarter: "this quarter", year: "this year", total: "in all" };
  const FREQUENCIES = { day: "once a day", week: "once a week", month: "once a month", quarter: "once a quarter", year: "once a year" };

  /** "recurring once a month in America/New_York, at most 12 times" (a mandate's recurrence). */
  function recurrenceText(r) {
    const every = (FREQUENCIES[r.frequency] || "once per " + r.frequency) + (r.time_zone ? " in " + r.time_zone : "");
    return "recurring " + every + (r.occurrences !== undefined ? ", at most " + r.occurrences + " time" + (r.occurrences === 1 ? "" : "s") : "");
  }

  /** An ISO 8601 duration of days, hours and minutes in words: "PT24H" -> "24 hours" (else as given). */
  function durationText(iso) {
    const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?)?$/.exec(iso || "");
    if (!m || !(m[1] || m[2] || m[3])) return iso;
    const unit = (n, word) => (n ? [Number(n) + " " + word + (Number(n) === 1 ? "" : "s")] : []);
    return [...unit(m[1], "day"), ...unit(m[2], "hour"), ...unit(m[3], "minute")].join(" ");
  }

  /** "today in Europe/Berlin: 20.00 of 50.00 EUR left, 1 of 3 payments left, resets <time>". */
  function periodText(p, currency) {
    const name = p.rolling
      ? "in the last " + durationText(p.rolling)
      : (PERIOD_NAMES[p.period] || "this " + p.period) + (p.time_zone && p.period !== "total" ? " in " + p.time_zone : "");
    const bits = [];
    if (p.remaining !== undefined) bits.push(p.remaining + " of " + p.limit + " " + currency + " left");
    else bits.push(p.spent + " " + currency + " spent");
    if (p.count_limit !== undefined) bits.push(p.count_remaining + " of " + p.count_limit + " payment" + (p.count_limit === 1 ? "" : "s") + " left");
    if (p.resets_at) bits.push((p.rolling ? "the oldest payment in it leaves it " : "resets ") + when(p.resets_at));
    return name + ": " + bits.join(", ");
  }

  /** The budget lines of an agreement; an intent's line names its mandate's recurrence, if any. */
  function budgetList(budget, mandates) {
    const list = el("ul", undefined, "budget");
    const recurrenceOf = (id) => {
      const m = (mandates || []).find((x) => x.intent_id === id);
      return m && m.recurrence ? { ...m.recurrence, time_zone: m.time_zone || "UTC" } : undefined;
    };
    for (const i of budget.intents || []) list.append(el("li", "intent " + i.intent_id + ": " + budgetText(i, recurrenceOf(i.intent_id))));
    if (budget.agreement) list.append(el("li", "agreement: " + budgetText(budget.agreement)));
    if (budget.delegation) list.append(el("li", "delegation " + budget.delegation.delegation_id + ": " + budgetText(budget.delegation)));
    return list;
  }

  /** An agreement's state: its own, or revoked through its revoked delegation (which invalidates its bound intents). */
  function agreementState(a, delegationStatus, expires) {
    if (a.delegation_id && delegationStatus.get(a.delegation_id) === "revoked") {
      const wrap = el("span");
      wrap.append(el("span", "revoked", "state state-revoked"), el("span", " through delegation " + a.delegation_id));
      return wrap;
    }
    return stateOf(a.status, expires, a.revocation);
  }

  function renderAgreements(agreements, delegationStatus) {
    const tbody = $("agreements").tBodies[0];
    tbody.replaceChildren();
    if (agreements.length === 0) return empty(tbody, 5, "No agreements yet.");
    for (const a of agreements) {
      const show = el("button", "Show ledger");
      show.type = "button";
      show.setAttribute("aria-label", "Show the ledger of " + a.agreement_id);
      show.addEventListener("click", () => showLedger(a.agreement_id, 0));
      const expires = (a.agreement.mandates || []).map((m) => m.expires_at).filter(Boolean).sort()[0];
      row(tbody, [el("span", a.agreement_id, "id"), el("span", a.agent_id, "id"), agreementState(a, delegationStatus, expires), budgetList(a.budget, a.agreement.mandates), show]);
    }
  }

  function renderDelegations(delegations) {
    const tbody = $("delegations").tBodies[0];
    tbody.replaceChildren();
    if (delegations.length === 0) return empty(tbody, 7, "No delegations yet.");
    for (const d of delegations) {
      const revoke = el("button", "Revoke", "danger");
      revoke.type = "button";
      revoke.setAttribute("aria-label", "Revoke delegation " + d.delegation_id);
      const record = d.delegation || {};
      revoke.disabled = d.status !== "active" || record.revocable === false;
      revoke.addEventListener("click", () => confirmRevoke(d.delegation_id, revoke));
      row(tbody, [
        el("span", d.delegation_id, "id"),
        el("span", d.agent_id, "id"),
        record.purpose || "",
        stateOf(d.status, record.expires_at, d.revocation),
        when(record.expires_at),
        d.budget ? budgetText(d.budget) : "no limit in one currency",
        revoke,
      ]);
    }
  }

  function renderAgents(agents) {
    const tbody = $("agents").tBodies[0];
    tbody.replaceChildren();
    if (agents.length === 0) return empty(tbody, 4, "No agents are registered with you yet.");
    for (const a of agents) row(tbody, [el("span", a.agent_id, "id"), stateOf(a.status), a.verification_level, when(a.registered_at)]);
  }

  async function load() {
    const [me, agreements, delegations, agents] = await Promise.all([
      api("GET", "v1/portal/me"),
      api("GET", "v1/portal/agreements"),
      api("GET", "v1/portal/delegations"),
      api("GET", "v1/portal/agents"),
    ]);
    $("who").textContent = "Signed in as " + me.email + " (" + me.principal_id + ")";
    signOutButton.hidden = false;
    renderAgreements(agreements.agreements, new Map(delegations.delegations.map((d) => [d.delegation_id, d.status])));
    renderDelegations(delegations.delegations);
    renderAgents(agents.agents);
    records.hidden = false;
  }

  async function showLedger(agreementId, after) {
    try {
      const page = await api("GET", "v1/agreements/" + encodeURIComponent(agreementId) + "/ledger?after=" + after + "&limit=" + LEDGER_PAGE);
      const tbody = $("ledger-entries").tBodies[0];
      if (after === 0) tbody.replaceChildren();
      ledgerOf = agreementId;
      ledgerAfter = page.next_after;
      for (const e of page.entries) row(tbody, [e.sequence, when(e.at), el("span", e.action_id, "id"), e.amount === undefined ? "" : e.amount + " " + e.currency, e.outcome]);
      if (page.ledger_sequence === 0) empty(tbody, 5, "Nothing spent yet.");
      $("ledger-title").textContent = "Ledger of " + agreementId;
      $("ledger-summary").textContent = page.ledger_sequence + " entr" + (page.ledger_sequence === 1 ? "y" : "ies") + (page.ledger_head ? "; head " + page.ledger_head : "") + ".";
      $("ledger-more").hidden = page.next_after === null;
      $("ledger").hidden = false;
      if (after === 0) $("ledger-title").focus();
    } catch (e) {
      failed(e);
    }
  }

  /** Revoking is final: a dialog names what stops and asks first; Escape or "Keep it" changes nothing. */
  const dialog = $("confirm-revoke");
  let pendingRevoke = null;
  function confirmRevoke(id, button) {
    pendingRevoke = { id, button };
    $("confirm-revoke-text").textContent =
      "Revoke delegation " + id + "? Every payment under it, and under everything delegated below it, stops at once. This cannot be undone.";
    dialog.showModal();
    $("confirm-revoke-keep").focus();
  }
  dialog.addEventListener("close", () => {
    const pending = pendingRevoke;
    pendingRevoke = null;
    if (!pending) return;
    if (dialog.returnValue === "revoke") void revokeDelegation(pending.id, pending.button);
    else {
      status.textContent = "Delegation " + pending.id + " was not revoked.";
      pending.button.focus();
    }
  });

  async function revokeDelegation(id, button) {
    button.disabled = true;
    status.textContent = "Revoking " + id + "...";
    try {
      const r = await api("POST", "v1/portal/delegations/" + encodeURIComponent(id) + "/revoke", {});
      await load();
      status.textContent = r.revoked
        ? "Delegation " + id + " is revoked" + (r.revoked_ids.length > 1 ? " with " + (r.revoked_ids.length - 1) + " below it" : "") +
          (r.agreement_ids.length ? "; agreements " + r.agreement_ids.join(", ") + " allow no more payments" : "") +
          (r.log_sequence !== null ? " (transparency log entry " + r.log_sequence + ")." : ".")
        : "Delegation " + id + " was already revoked.";
      $("delegations-title").focus();
    } catch (e) {
      failed(e);
      button.disabled = false;
    }
  }

  function showSignedOut(message) {
    window.WritPortal.forget();
    records.hidden = true;
    signOutButton.hidden = true;
    $("who").textContent = "";
    $("signed-out").hidden = false;
    status.textContent = message || "";
  }

  function failed(e) {
    if (e instanceof SignedOut) showSignedOut("Your session ended (" + e.message + "). Sign in again.");
    else status.textContent = "Something failed: " + (e instanceof Error ? e.message : String(e)) + ".";
  }

  signOutButton.addEventListener("click", async () => {
    try {
      await api("DELETE", "v1/sessions/current");
    } catch {
      // Signed out already, or unreachable: the tab forgets the session either way.
    }
    showSignedOut("You are signed out.");
    $("signed-out").querySelector("a").focus();
  });

  $("ledger-more").addEventListener("click", () => {
    if (ledgerOf !== null && ledgerAfter !== null) void showLedger(ledgerOf, ledgerAfter);
  });

  if (!window.WritPortal.session()) showSignedOut();
  else load().catch(failed);
})();
