/**
 * DELETE /svc/delegations/{id} over real HTTP: who may revoke (admin, the delegation's
 * organization with agents:write, the principal's signed revocation), the answer, the log
 * entry and alert, everything below in a chain, repeats, and propagation to a second
 * data-plane process on the same database (its index is fed by NOTIFY).
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRINCIPAL, otherKey, principalKey } from "../fixtures/records.js";
import { loadDelegation } from "../../src/store/delegations.js";
import { createPool } from "../../src/store/pool.js";
import { canonicalJson } from "../../src/core/canonical/index.js";
import { signJws } from "../../src/core/jose/index.js";
import { KEY_PROBLEM, signDelegationRevocation } from "../../src/core/delegation/signed-revocation.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { action, HOUR, iso, mandate, startVerifyWorld, storeAgreement, uid, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

const revoke = (id: string, token?: string | null, body?: unknown) => w.call("DELETE", `/svc/delegations/${encodeURIComponent(id)}`, token, body);

async function lastLogEntry(): Promise<{ kind: string; sequence: number; body: Record<string, unknown> }> {
  const head = await w.call("GET", "/v1/log/head");
  return (await w.call("GET", `/v1/log/entries/${String(head.body.tree_size)}`)).body.entry as {
    kind: string;
    sequence: number;
    body: Record<string, unknown>;
  };
}

async function delegated(): Promise<{ agentId: string; agreementId: string; delegationId: string }> {
  const { agent_id } = await w.registerAgent(w.operatorKey);
  const s = await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
  return { agentId: agent_id, agreementId: s.agreementId, delegationId: s.delegationId as string };
}

describe("DELETE /svc/delegations/{id}", () => {
  it("the delegation's organization revokes it: log entry, alert, answer; a repeat revokes nothing", async () => {
    const d = await delegated();
    const wallet = await w.createOrg("wallet");
    const walletKey = (await w.issueKey(wallet)).token;
    const sub = await w.call("POST", "/v1/subscriptions", walletKey, { agent_id: d.agentId, webhook_url: "http://127.0.0.1:9/hook" });
    expect(sub.status).toBe(201);

    const r = await revoke(d.delegationId, w.operatorKey, { reason: "card reported stolen" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      revoked: true,
      delegation_id: d.delegationId,
      revoked_ids: [d.delegationId],
      agreement_ids: [d.agreementId],
      log_sequence: expect.any(Number),
    });
    const entry = await lastLogEntry();
    expect(entry).toMatchObject({
      kind: "revocation",
      sequence: r.body.log_sequence,
      body: { delegation_id: d.delegationId, ids: [d.delegationId], reason: "card reported stolen", by: "policy" },
    });
    const { rows } = await w.db.pool.query<{ payload: Record<string, unknown> }>("SELECT payload FROM webhook_outbox WHERE subscription_id = $1", [
      sub.body.subscription_id,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.payload).toMatchObject({
      type: "revocation",
      agent_id: d.agentId,
      details: { delegation_id: d.delegationId, ids: [d.delegationId], reason: "card reported stolen", by: "policy" },
    });
    expect((await w.verify({ agent_id: d.agentId, action: action() })).body).toMatchObject({
      verdict: "DENY",
      reasons: ["DELEGATION_REVOKED"],
      agreement_id: d.agreementId,
    });

    const again = await revoke(d.delegationId, w.operatorKey);
    expect(again).toMatchObject({ status: 200, body: { revoked: false, delegation_id: d.delegationId, revoked_ids: [], log_sequence: null } });
    expect((await lastLogEntry()).sequence).toBe(entry.sequence);
  });

  it("statuses: 401 without credential, 403 without agents:write, 404 for unknown ids and other organizations, 409 when not revocable", async () => {
    const d = await delegated();
    expect(await revoke(d.delegationId, null)).toMatchObject({ status: 401, body: { error: "bearer token required" } });
    expect((await revoke(d.delegationId, "bur_" + "x".repeat(43))).status).toBe(401);
    expect(await revoke("del-unknown", w.admin)).toMatchObject({ status: 404, body: { error: "delegation was not found" } });
    expect(await revoke("del-unknown", w.operatorKey)).toMatchObject({ status: 404, body: { error: "delegation was not found" } });
    const other = await w.createOrg("agent_operator");
    expect(await revoke(d.delegationId, (await w.issueKey(other)).token)).toMatchObject({ status: 404, body: { error: "delegation was not found" } });
    const readOnly = (await w.issueKey(w.operatorOrg, { scopes: ["registry:read", "verify"] })).token;
    expect(await revoke(d.delegationId, readOnly)).toMatchObject({ status: 403, body: { error: "API key lacks the scope agents:write" } });

    const { agent_id } = await w.registerAgent(w.operatorKey);
    const fixed = await storeAgreement(w, { mandates: [mandate(agent_id, "i1")], delegation: { over: { revocable: false } } });
    expect(await revoke(fixed.delegationId as string, w.admin)).toMatchObject({ status: 409, body: { error: "delegation is not revocable" } });
    expect((await loadDelegation(w.db.pool, d.delegationId))?.status).toBe("active");
  });

  it("the admin revokes as the service", async () => {
    const d = await delegated();
    expect((await revoke(d.delegationId, w.admin)).body).toMatchObject({ revoked: true });
    expect(await loadDelegation(w.db.pool, d.delegationId)).toMatchObject({ status: "revoked", revokedBy: "service" });
  });

  it("the principal revokes with a signed revocation; another key or another delegation does not verify", async () => {
    const d = await delegated();
    const at = iso(Date.now());
    const forged = await signDelegationRevocation({ delegation_id: d.delegationId, at, reason: "no" }, otherKey);
    expect(await revoke(d.delegationId, null, { revocation: forged })).toMatchObject({
      status: 401,
      body: { error: expect.stringContaining("delegation revocation did not verify") },
    });
    const elsewhere = await signDelegationRevocation({ delegation_id: "del-other", at, reason: "no" }, principalKey);
    expect((await revoke(d.delegationId, null, { revocation: elsewhere })).status).toBe(401);
    const signed = await signDelegationRevocation({ delegation_id: d.delegationId, at, reason: "I changed my mind" }, principalKey);
    const r = await revoke(d.delegationId, null, { revocation: signed });
    expect(r.body).toMatchObject({ revoked: true, revoked_ids: [d.delegationId] });
    expect(await loadDelegation(w.db.pool, d.delegationId)).toMatchObject({ status: "revoked", revokedBy: "principal", revokedReason: "I changed my mind" });
  });

  it("without credentials, an unknown id answers exactly as a signature by the wrong key (existence is not revealed)", async () => {
    const d = await delegated();
    const at = iso(Date.now());
    const unknown = uid("del-unknown");
    // A bad signature on a real delegation, and a principal's signature naming an id that does not exist.
    const bad = await revoke(d.delegationId, null, {
      revocation: await signDelegationRevocation({ delegation_id: d.delegationId, at, reason: "x" }, otherKey),
    });
    const none = await revoke(unknown, null, { revocation: await signDelegationRevocation({ delegation_id: unknown, at, reason: "x" }, principalKey) });
    expect(bad.status).toBe(401);
    expect({ status: none.status, body: none.body }).toEqual({ status: bad.status, body: bad.body });
    expect(none.body).toEqual({ error: `delegation revocation did not verify: ${KEY_PROBLEM}` });
    // Without a revocation, both are asked for a bearer.
    expect((await revoke(unknown, null, {})).body).toEqual((await revoke(d.delegationId, null, {})).body);
    // Problems of the token itself are named alike for known and unknown ids.
    const noneTyp = await signJws(canonicalJson({ svc_delegation_revocation: 1, delegation_id: unknown, at, reason: "x" }), principalKey, "svc-revocation+jws");
    expect((await revoke(unknown, null, { revocation: noneTyp })).body).toEqual({
      error: "delegation revocation did not verify: JWS typ must be svc-delegation-revocation+jws",
    });
    expect((await loadDelegation(w.db.pool, d.delegationId))?.status).toBe("active");
  });

  it("refuses a principal's revocation signed over non-canonical JSON (whitespace, member order, 1.0)", async () => {
    const d = await delegated();
    const at = iso(Date.now());
    const spellings = [
      `{"svc_delegation_revocation": 1, "delegation_id": ${JSON.stringify(d.delegationId)}, "at": "${at}", "reason": "x"}`,
      `{"svc_delegation_revocation":1,"reason":"x","delegation_id":${JSON.stringify(d.delegationId)},"at":"${at}"}`,
      `{"at":"${at}","delegation_id":${JSON.stringify(d.delegationId)},"reason":"x","svc_delegation_revocation":1.0}`,
    ];
    for (const text of spellings) {
      const r = await revoke(d.delegationId, null, { revocation: await signJws(text, principalKey, "svc-delegation-revocation+jws") });
      expect(r, text).toMatchObject({
        status: 401,
        body: { error: "delegation revocation did not verify: JWS payload is not the RFC 8785 canonical form of its JSON" },
      });
    }
    expect((await loadDelegation(w.db.pool, d.delegationId))?.status).toBe("active");
  });

  it("revokes everything below in the chain", async () => {
    const parent = await delegated();
    const { agent_id: sub } = await w.registerAgent(w.operatorKey);
    const now = Date.now();
    const child = await storeAgreement(w, {
      mandates: [mandate(sub, "i1")],
      delegation: {
        id: uid("del-child"),
        over: {
          delegation_chain: [
            {
              delegation_id: parent.delegationId,
              delegator: { ...PRINCIPAL },
              delegate: { agent_id: parent.agentId },
              delegated_at: iso(now - 2 * HOUR),
              expires_at: iso(now + 48 * HOUR),
              scope: { currency: "USD" },
            },
          ],
        },
      },
    });
    const r = await revoke(parent.delegationId, w.operatorKey);
    expect(r.body.revoked_ids).toEqual([child.delegationId, parent.delegationId].sort());
    expect(r.body.agreement_ids).toEqual([child.agreementId, parent.agreementId].sort());
    expect((await w.verify({ agent_id: sub, action: action() })).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_REVOKED"] });
  });
});

describe("propagation to another process", () => {
  let pool: Pool;
  let b: TestServer;
  beforeAll(async () => {
    pool = createPool(w.db.url, { max: 5 });
    b = await startTestServer({ BUR_ADMIN_TOKEN: w.admin, SVC_LOG_SIGNING_SEED: w.seed, BUR_WEBHOOK_WORKER: "0" }, { pool });
  });
  afterAll(async () => {
    await b?.close();
    await pool?.end();
  });

  it("a revocation through server A makes verify through server B answer DELEGATION_REVOKED within 1 s", async () => {
    const d = await delegated();
    const viaB = (act: Record<string, unknown>) =>
      fetch(`${b.url}/v1/verify`, {
        method: "POST",
        headers: { authorization: `Bearer ${w.operatorKey}`, "content-type": "application/json" },
        body: JSON.stringify({ agent_id: d.agentId, agreement_id: d.agreementId, action: act }),
      }).then(async (r) => (await r.json()) as Record<string, unknown>);
    expect((await viaB(action())).verdict).toBe("ALLOW");
    const index = b.app.verifyRuntime?.index;
    expect(index?.isDelegationRevoked(w.operatorOrg, d.delegationId)).toBe(false);

    const started = Date.now();
    expect((await revoke(d.delegationId, w.operatorKey)).body.revoked).toBe(true);
    await expect.poll(() => index?.isDelegationRevoked(w.operatorOrg, d.delegationId), { timeout: 1000, interval: 10 }).toBe(true);
    const after = await viaB(action());
    expect(Date.now() - started).toBeLessThan(1000);
    expect(after).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK", reasons: ["DELEGATION_REVOKED"] });
  });
});
