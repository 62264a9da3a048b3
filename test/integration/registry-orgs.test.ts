/**
 * Organizations and API keys: creation, issuing (defaults, explicit scopes, no escalation),
 * listing without tokens, revocation, tenant isolation, storage of the hash only, and the
 * admin route's answers when BUR_ADMIN_TOKEN is unset.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer } from "../helpers/server.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

let w: RegistryWorld;

beforeAll(async () => {
  w = await startRegistryWorld();
});

afterAll(async () => {
  await w?.close();
});

describe("POST /v1/orgs", () => {
  it("creates an active organization with an org_ id", async () => {
    const r = await w.call("POST", "/v1/orgs", w.admin, { name: "Acme Wallet", org_type: "wallet" });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ org_id: expect.stringMatching(/^org_[0-9a-f]{24}$/), name: "Acme Wallet", org_type: "wallet", status: "active" });
  });

  it("accepts each organization type", async () => {
    for (const t of ["agent_operator", "wallet", "bank_issuer", "processor_psp", "merchant"]) {
      expect((await w.call("POST", "/v1/orgs", w.admin, { name: t, org_type: t })).status).toBe(201);
    }
  });

  it("answers 400 for an unknown org_type, a missing name and a non-object body", async () => {
    const bad = await w.call("POST", "/v1/orgs", w.admin, { name: "x", org_type: "bank" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("org_type must be one of: agent_operator, wallet, bank_issuer, processor_psp, merchant");
    const noName = await w.call("POST", "/v1/orgs", w.admin, { org_type: "wallet" });
    expect(noName).toMatchObject({ status: 400, body: { error: "name is required" } });
    const empty = await w.call("POST", "/v1/orgs", w.admin, { name: "", org_type: "wallet" });
    expect(empty).toMatchObject({ status: 400, body: { error: "name must not be empty" } });
    const nul = await w.call("POST", "/v1/orgs", w.admin, { name: "a\u0000b", org_type: "wallet" });
    expect(nul).toMatchObject({ status: 400, body: { error: "name must not contain U+0000" } });
    const arr = await w.call("POST", "/v1/orgs", w.admin, [1]);
    expect(arr).toMatchObject({ status: 400, body: { error: "request body must be a JSON object" } });
  });

  it("answers 401 without a bearer and 403 for any other credential", async () => {
    expect(await w.call("POST", "/v1/orgs", null, { name: "x", org_type: "wallet" })).toMatchObject({
      status: 401,
      body: { error: "bearer token required" },
    });
    expect(await w.call("POST", "/v1/orgs", `${w.admin}x`, { name: "x", org_type: "wallet" })).toMatchObject({
      status: 403,
      body: { error: "admin token required" },
    });
  });
});

describe("POST /v1/orgs/{org_id}/keys", () => {
  let operator = "";
  let wallet = "";

  beforeAll(async () => {
    operator = await w.createOrg("agent_operator");
    wallet = await w.createOrg("wallet");
  });

  it("issues a bur_ token once, with its prefix and the type's default scopes; only the hash is stored", async () => {
    const r = await w.call("POST", `/v1/orgs/${operator}/keys`, w.admin, { name: "ops" });
    expect(r.status).toBe(201);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const { key_id, prefix, scopes, token } = r.body as { key_id: string; prefix: string; scopes: string[]; token: string };
    expect(Object.keys(r.body).sort()).toEqual(["key_id", "prefix", "scopes", "token"]);
    expect(key_id).toMatch(/^key_[0-9a-f]{24}$/);
    expect(token).toMatch(/^bur_[A-Za-z0-9_-]{43}$/);
    expect(prefix).toBe(token.slice(0, 12));
    expect(scopes).toEqual(["keys:write", "agents:write", "registry:read", "verify"]);
    const { rows } = await w.db.pool.query("SELECT * FROM api_keys WHERE key_id = $1", [key_id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(createHash("sha256").update(token).digest("hex"));
    expect(JSON.stringify(rows[0])).not.toContain(token);
  });

  it("gives payment-side organizations their defaults", async () => {
    const k = await w.issueKey(wallet);
    expect(k.scopes).toEqual(["keys:write", "registry:read", "inquiries:write", "reports:write", "subscriptions:write", "outcomes:write"]);
  });

  it("issues explicit scopes inside what the type may hold, and 400 otherwise", async () => {
    expect((await w.issueKey(wallet, { scopes: ["reports:write", "registry:read"] })).scopes).toEqual(["registry:read", "reports:write"]);
    const verifyForWallet = await w.call("POST", `/v1/orgs/${wallet}/keys`, w.admin, { name: "x", scopes: ["verify"] });
    expect(verifyForWallet.status).toBe(400);
    const notAllowed = await w.call("POST", `/v1/orgs/${wallet}/keys`, w.admin, { name: "x", scopes: ["agents:write"] });
    expect(notAllowed).toMatchObject({ status: 400, body: { error: "scope agents:write is not allowed for a wallet organization" } });
    const unknown = await w.call("POST", `/v1/orgs/${wallet}/keys`, w.admin, { name: "x", scopes: ["root"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/^scope "root" is unknown/);
    expect((await w.call("POST", `/v1/orgs/${wallet}/keys`, w.admin, { name: "x", scopes: [] })).status).toBe(400);
    expect(await w.call("POST", `/v1/orgs/${wallet}/keys`, w.admin, { name: "x", scopes: { a: 1 } })).toMatchObject({
      status: 400,
      body: { error: "scopes must be an array" },
    });
    expect(await w.call("POST", `/v1/orgs/${wallet}/keys`, w.admin, {})).toMatchObject({ status: 400, body: { error: "name is required" } });
  });

  it("lets an organization key with keys:write issue keys for its own organization, never beyond its own scopes", async () => {
    const full = await w.issueKey(wallet);
    const child = await w.issueKey(wallet, { token: full.token });
    expect(child.scopes).toEqual(full.scopes);
    const narrow = await w.issueKey(wallet, { token: full.token, scopes: ["keys:write", "registry:read"] });
    const escalate = await w.call("POST", `/v1/orgs/${wallet}/keys`, narrow.token, { name: "more" });
    expect(escalate).toMatchObject({
      status: 403,
      body: { error: "a key cannot grant a scope it does not hold: inquiries:write, reports:write, subscriptions:write, outcomes:write" },
    });
    expect((await w.issueKey(wallet, { token: narrow.token, scopes: ["registry:read"] })).scopes).toEqual(["registry:read"]);
  });

  it("answers 404 to another organization's key, as for an organization that does not exist", async () => {
    const otherKey = await w.issueKey(operator);
    const asOther = await w.call("POST", `/v1/orgs/${wallet}/keys`, otherKey.token, { name: "steal" });
    const missing = await w.call("POST", "/v1/orgs/org_000000000000000000000000/keys", otherKey.token, { name: "x" });
    expect(asOther).toMatchObject({ status: 404, body: { error: "organization was not found" } });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(asOther.body);
    const adminMissing = await w.call("POST", "/v1/orgs/org_000000000000000000000000/keys", w.admin, { name: "x" });
    expect(adminMissing).toMatchObject({ status: 404, body: { error: "organization was not found" } });
  });

  it("answers 401 to a revoked key", async () => {
    const k = await w.issueKey(wallet);
    await w.call("DELETE", `/v1/orgs/${wallet}/keys/${k.key_id}`, w.admin);
    expect(await w.call("POST", `/v1/orgs/${wallet}/keys`, k.token, { name: "again" })).toMatchObject({
      status: 401,
      body: { error: "API key is revoked" },
    });
  });
});

describe("GET and DELETE /v1/orgs/{org_id}/keys", () => {
  it("lists the organization's keys without tokens, and revocation is idempotent and shown", async () => {
    const org = await w.createOrg("merchant");
    const a = await w.issueKey(org, { name: "first" });
    const b = await w.issueKey(org, { name: "second", scopes: ["registry:read"] });
    const list = await w.call("GET", `/v1/orgs/${org}/keys`, a.token);
    expect(list.status).toBe(200);
    const keys = list.body.keys as Record<string, unknown>[];
    expect(keys.map((k) => k.key_id)).toEqual([a.key_id, b.key_id]);
    expect(keys[1]).toEqual({
      key_id: b.key_id,
      prefix: b.token.slice(0, 12),
      name: "second",
      scopes: ["registry:read"],
      created_at: expect.any(String),
      revoked_at: null,
    });
    expect(JSON.stringify(list.body)).not.toContain(a.token);
    expect(JSON.stringify(list.body)).not.toContain(b.token);

    const del = await w.call("DELETE", `/v1/orgs/${org}/keys/${b.key_id}`, a.token);
    expect(del.status).toBe(200);
    expect(del.body.revoked_at).toEqual(expect.any(String));
    const again = await w.call("DELETE", `/v1/orgs/${org}/keys/${b.key_id}`, a.token);
    expect(again.body.revoked_at).toBe(del.body.revoked_at);
    const after = await w.call("GET", `/v1/orgs/${org}/keys`, w.admin);
    expect((after.body.keys as Record<string, unknown>[])[1]?.revoked_at).toBe(del.body.revoked_at);
  });

  it("lets a keys:write key revoke only keys whose scopes it holds itself (no escalation by revocation)", async () => {
    const org = await w.createOrg("processor_psp");
    const full = await w.issueKey(org);
    const keysOnly = await w.issueKey(org, { scopes: ["keys:write"] });
    const narrow = await w.issueKey(org, { scopes: ["keys:write", "registry:read"] });
    const refused = await w.call("DELETE", `/v1/orgs/${org}/keys/${full.key_id}`, keysOnly.token);
    expect(refused).toMatchObject({
      status: 403,
      body: {
        error: "a key cannot revoke a key holding a scope it does not hold: registry:read, inquiries:write, reports:write, subscriptions:write, outcomes:write",
      },
    });
    expect((await w.call("DELETE", `/v1/orgs/${org}/keys/${narrow.key_id}`, keysOnly.token)).status).toBe(403);
    // The full key still works; a key within the revoker's scopes (itself included) can be revoked.
    expect((await w.call("GET", `/v1/orgs/${org}/keys`, full.token)).status).toBe(200);
    expect((await w.call("DELETE", `/v1/orgs/${org}/keys/${narrow.key_id}`, full.token)).body.revoked_at).toEqual(expect.any(String));
    expect((await w.call("DELETE", `/v1/orgs/${org}/keys/${keysOnly.key_id}`, keysOnly.token)).status).toBe(200);
    // The admin revokes any key.
    expect((await w.call("DELETE", `/v1/orgs/${org}/keys/${full.key_id}`, w.admin)).status).toBe(200);
  });

  it("does not list or revoke another organization's keys", async () => {
    const a = await w.createOrg("merchant");
    const b = await w.createOrg("merchant");
    const ka = await w.issueKey(a);
    const kb = await w.issueKey(b);
    expect((await w.call("GET", `/v1/orgs/${a}/keys`, kb.token)).status).toBe(404);
    expect((await w.call("DELETE", `/v1/orgs/${a}/keys/${ka.key_id}`, kb.token)).status).toBe(404);
    // Through its own organization's path, another organization's key id is simply not found.
    expect(await w.call("DELETE", `/v1/orgs/${b}/keys/${ka.key_id}`, kb.token)).toMatchObject({
      status: 404,
      body: { error: "API key was not found" },
    });
    const own = await w.call("GET", `/v1/orgs/${a}/keys`, ka.token);
    expect((own.body.keys as Record<string, unknown>[])[0]?.revoked_at).toBeNull();
  });
});

describe("without BUR_ADMIN_TOKEN", () => {
  it("answers 401 without a bearer and 503 naming the setting otherwise; keys still work", async () => {
    const server = await startTestServer({ SVC_LOG_SIGNING_SEED: w.seed }, { pool: w.db.pool });
    try {
      const post = (token?: string) =>
        fetch(`${server.url}/v1/orgs`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify({ name: "x", org_type: "wallet" }),
        });
      expect((await post()).status).toBe(401);
      const r = await post("anything");
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ error: "BUR_ADMIN_TOKEN is not set" });
      const org = await w.createOrg("wallet");
      const k = await w.issueKey(org);
      const list = await fetch(`${server.url}/v1/orgs/${org}/keys`, { headers: { authorization: `Bearer ${k.token}` } });
      expect(list.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("without DATABASE_URL", () => {
  it("answers 503 on registry routes once the credential is shown", async () => {
    const server = await startTestServer({ BUR_ADMIN_TOKEN: w.admin });
    try {
      const r = await fetch(`${server.url}/v1/orgs`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${w.admin}` },
        body: JSON.stringify({ name: "x", org_type: "wallet" }),
      });
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ error: "DATABASE_URL is not set" });
      const k = await fetch(`${server.url}/v1/subscriptions`, { headers: { authorization: `Bearer bur_${"a".repeat(43)}` } });
      expect(k.status).toBe(503);
    } finally {
      await server.close();
    }
  });
});
