/**
 * The credential x endpoint matrix of the registry: every registry endpoint called with no
 * bearer, a garbage bearer, an unknown bur_ token, a revoked key, another organization's key,
 * the admin token, and a key holding each single scope. Each call is otherwise valid, so the
 * status is decided by the credential alone.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCOPES, type Scope } from "../../src/core/registry/index.js";
import { freshPublicKey, randomHash, startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

type Cred = "none" | "garbage" | "unknown key" | "revoked key" | "other org" | "admin" | `scope ${Scope}`;

const CREDS: Cred[] = ["none", "garbage", "unknown key", "revoked key", "other org", "admin", ...SCOPES.map((s) => `scope ${s}` as const)];

interface Call {
  method: string;
  path: string;
  body?: unknown;
}

interface Endpoint {
  name: string;
  /** "admin": admin routes; "keys": the key routes (admin or own keys:write); else the scope. */
  guard: "admin" | "keys" | Scope;
  ok: number;
  /** Status for another organization's key, where the endpoint has an owner (else not called). */
  otherOrg?: number;
  /** Builds a valid call for `home` (the credential's own organization). */
  call(home: string, cred: Cred): Promise<Call>;
}

let w: RegistryWorld;
const tokens = new Map<Cred, string | null>();
const homes = new Map<Cred, string>();
let op1 = "";
let wallet = "";
let walletFull = "";
let agentA = "";

function expected(e: Endpoint, cred: Cred): number | undefined {
  if (e.guard === "admin") return cred === "none" ? 401 : cred === "admin" ? e.ok : 403;
  if (cred === "none" || cred === "garbage" || cred === "unknown key" || cred === "revoked key") return 401;
  if (cred === "other org") return e.guard === "keys" ? 404 : e.otherOrg;
  if (cred === "admin") return e.guard === "keys" ? e.ok : 403;
  const scope = cred.slice("scope ".length);
  return scope === (e.guard === "keys" ? "keys:write" : e.guard) ? e.ok : 403;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: "POST /v1/orgs",
    guard: "admin",
    ok: 201,
    call: async () => ({ method: "POST", path: "/v1/orgs", body: { name: "matrix org", org_type: "merchant" } }),
  },
  {
    name: "POST /v1/orgs/{org_id}/keys",
    guard: "keys",
    ok: 201,
    call: async (home) => ({ method: "POST", path: `/v1/orgs/${home}/keys`, body: { name: "matrix", scopes: ["keys:write"] } }),
  },
  {
    name: "GET /v1/orgs/{org_id}/keys",
    guard: "keys",
    ok: 200,
    call: async (home) => ({ method: "GET", path: `/v1/orgs/${home}/keys` }),
  },
  {
    name: "DELETE /v1/orgs/{org_id}/keys/{key_id}",
    guard: "keys",
    ok: 200,
    call: async (home) => {
      // A key within the keys:write key's own scopes (revoking wider keys is refused: registry-orgs.test.ts).
      const k = await w.issueKey(home, { scopes: ["keys:write"] });
      return { method: "DELETE", path: `/v1/orgs/${home}/keys/${k.key_id}` };
    },
  },
  {
    name: "POST /v1/agents",
    guard: "agents:write",
    ok: 201,
    call: async () => ({
      method: "POST",
      path: "/v1/agents",
      body: {
        agent_id: `matrix-${randomBytes(6).toString("hex")}`,
        principal_id: "prn_matrix",
        verification_level: "self_declared",
        public_key: freshPublicKey(),
      },
    }),
  },
  {
    name: "GET /v1/agents/{agent_id}",
    guard: "registry:read",
    ok: 200,
    call: async () => ({ method: "GET", path: `/v1/agents/${agentA}` }),
  },
  {
    name: "PATCH /v1/agents/{agent_id}",
    guard: "agents:write",
    ok: 200,
    otherOrg: 403,
    call: async () => ({ method: "PATCH", path: `/v1/agents/${agentA}`, body: { status: "active" } }),
  },
  {
    name: "POST /v1/inquiries",
    guard: "inquiries:write",
    ok: 200,
    call: async () => ({ method: "POST", path: "/v1/inquiries", body: { agent_id: agentA, purpose_code: "payment_authorization" } }),
  },
  {
    name: "POST /v1/reports",
    guard: "reports:write",
    ok: 201,
    call: async () => ({
      method: "POST",
      path: "/v1/reports",
      body: { agent_id: agentA, kind: "transaction_outcome", evidence_hash: randomHash(), summary: "settled" },
    }),
  },
  {
    name: "POST /v1/subscriptions",
    guard: "subscriptions:write",
    ok: 201,
    call: async () => ({
      method: "POST",
      path: "/v1/subscriptions",
      body: { agent_id: agentA, webhook_url: `https://hooks.example.com/${randomBytes(6).toString("hex")}` },
    }),
  },
  {
    name: "GET /v1/subscriptions",
    guard: "subscriptions:write",
    ok: 200,
    call: async () => ({ method: "GET", path: "/v1/subscriptions" }),
  },
  {
    name: "DELETE /v1/subscriptions/{subscription_id}",
    guard: "subscriptions:write",
    ok: 200,
    otherOrg: 404,
    call: async () => {
      const r = await w.call("POST", "/v1/subscriptions", walletFull, {
        agent_id: agentA,
        webhook_url: `https://hooks.example.com/${randomBytes(6).toString("hex")}`,
      });
      expect(r.status).toBe(201);
      return { method: "DELETE", path: `/v1/subscriptions/${r.body.subscription_id as string}` };
    },
  },
];

beforeAll(async () => {
  w = await startRegistryWorld();
  op1 = await w.createOrg("agent_operator", "operator one");
  const op2 = await w.createOrg("agent_operator", "operator two");
  wallet = await w.createOrg("wallet", "wallet home");
  const other = await w.createOrg("wallet", "wallet other");

  const op1Full = (await w.issueKey(op1)).token;
  walletFull = (await w.issueKey(wallet)).token;
  agentA = (await w.registerAgent(op1Full)).agent_id;

  const revoked = await w.issueKey(wallet);
  expect((await w.call("DELETE", `/v1/orgs/${wallet}/keys/${revoked.key_id}`, w.admin)).status).toBe(200);

  tokens.set("none", null);
  tokens.set("garbage", "not-a-token");
  tokens.set("unknown key", `bur_${randomBytes(32).toString("base64url")}`);
  tokens.set("revoked key", revoked.token);
  tokens.set("admin", w.admin);
  for (const c of ["none", "garbage", "unknown key", "revoked key", "admin"] as const) homes.set(c, wallet);
  for (const scope of SCOPES) {
    const home = scope === "agents:write" || scope === "verify" ? op1 : wallet;
    tokens.set(`scope ${scope}`, (await w.issueKey(home, { scopes: [scope] })).token);
    homes.set(`scope ${scope}`, home);
  }
  // "other org": a full key of another organization, calling the home organization's resources.
  tokens.set("other org", (await w.issueKey(other)).token);
  homes.set("other org", wallet);
  // For the agent's owner check the other organization must be an operator holding agents:write.
  otherOperatorToken = (await w.issueKey(op2)).token;
});

let otherOperatorToken = "";

afterAll(async () => {
  await w?.close();
});

describe("registry credential matrix", () => {
  for (const e of ENDPOINTS) {
    describe(e.name, () => {
      for (const cred of CREDS) {
        const want = expected(e, cred);
        if (want === undefined) continue;
        it(`${cred} -> ${want}`, async () => {
          const home = homes.get(cred) ?? wallet;
          const c = await e.call(home, cred);
          const token = cred === "other org" && e.name.startsWith("PATCH") ? otherOperatorToken : tokens.get(cred);
          const r = await w.call(c.method, c.path, token, c.body);
          expect(r.status, JSON.stringify(r.body)).toBe(want);
          if (want >= 400) expect(Object.keys(r.body)).toEqual(["error"]);
        });
      }
    });
  }
});

describe("credential error texts", () => {
  it("names the failure", async () => {
    expect((await w.call("GET", "/v1/subscriptions", null)).body.error).toBe("bearer token required");
    expect((await w.call("GET", "/v1/subscriptions", "garbage")).body.error).toBe("bearer token is not recognized");
    expect((await w.call("GET", "/v1/subscriptions", tokens.get("revoked key"))).body.error).toBe("API key is revoked");
    expect((await w.call("GET", "/v1/subscriptions", w.admin)).body.error).toBe("an organization API key is required");
    expect((await w.call("GET", "/v1/subscriptions", tokens.get("scope verify"))).body.error).toBe("API key lacks the scope subscriptions:write");
    expect((await w.call("POST", "/v1/orgs", walletFull, { name: "x", org_type: "merchant" })).body.error).toBe("admin token required");
    expect((await w.call("GET", `/v1/orgs/${wallet}/keys`, tokens.get("other org"))).body.error).toBe("organization was not found");
  });

  it("accepts the scheme case-insensitively and refuses other schemes", async () => {
    const r = await fetch(`${w.server.url}/v1/subscriptions`, { headers: { authorization: `bearer ${walletFull}` } });
    expect(r.status).toBe(200);
    const basic = await fetch(`${w.server.url}/v1/subscriptions`, { headers: { authorization: `Basic ${walletFull}` } });
    expect(basic.status).toBe(401);
  });

  it("answers an organization route before reading a malformed body", async () => {
    const r = await fetch(`${w.server.url}/v1/reports`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect(r.status).toBe(401);
  });

  it("refuses a key from the request after its revocation, and the admin revocation works across organizations", async () => {
    const k = await w.issueKey(op1);
    expect((await w.call("GET", `/v1/agents/${agentA}`, k.token)).status).toBe(200);
    expect((await w.call("DELETE", `/v1/orgs/${op1}/keys/${k.key_id}`, k.token)).status).toBe(200);
    const after = await w.call("GET", `/v1/agents/${agentA}`, k.token);
    expect(after.status).toBe(401);
    expect(after.body.error).toBe("API key is revoked");
  });
});
