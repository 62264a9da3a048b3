/**
 * Agents: registration (201, 400s, 409s, the registration log entry without principal_id, 503
 * without the log key), the record with tenant isolation of principal_id, status changes and
 * the verify path's store function.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSigner, keyId, parsePublicJwk } from "../../src/core/jose/index.js";
import { getAgentForVerify } from "../../src/store/agents.js";
import { startTestServer } from "../helpers/server.js";
import { ed25519Jwk, smallOrderEncodings } from "../helpers/ed25519-small-order.js";
import { freshPublicKey, startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

let w: RegistryWorld;
let operator = "";
let opToken = "";
let otherOpToken = "";
let readerToken = "";

async function logEntries(): Promise<{ sequence: number; kind: string; body: Record<string, unknown> }[]> {
  const head = await w.call("GET", "/v1/log/head");
  if (head.status === 404) return [];
  const size = head.body.tree_size as number;
  const out = [];
  for (let s = 1; s <= size; s++) {
    const r = await w.call("GET", `/v1/log/entries/${s}`);
    expect(r.status).toBe(200);
    out.push(r.body.entry as { sequence: number; kind: string; body: Record<string, unknown> });
  }
  return out;
}

beforeAll(async () => {
  w = await startRegistryWorld();
  operator = await w.createOrg("agent_operator");
  opToken = (await w.issueKey(operator)).token;
  otherOpToken = (await w.issueKey(await w.createOrg("agent_operator"))).token;
  readerToken = (await w.issueKey(await w.createOrg("wallet"))).token;
});

afterAll(async () => {
  await w?.close();
});

describe("POST /v1/agents", () => {
  it("registers an agent: 201 {agent_id, status, verification_level, fingerprint, score}", async () => {
    const jwk = freshPublicKey();
    const r = await w.call("POST", "/v1/agents", opToken, {
      agent_id: "shopper-1",
      principal_id: "prn_alice01",
      verification_level: "institution_attested",
      public_key: jwk,
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      agent_id: "shopper-1",
      status: "active",
      verification_level: "institution_attested",
      fingerprint: keyId(parsePublicJwk(jwk)),
      score: 700,
    });
  });

  it("appends a registration entry to the transparency log that never carries the principal_id", async () => {
    const entries = await logEntries();
    const reg = entries.find((e) => e.kind === "registration" && e.body.agent_id === "shopper-1");
    expect(reg).toBeDefined();
    expect(reg?.body).toEqual({
      agent_id: "shopper-1",
      fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      verification_level: "institution_attested",
      org_id: operator,
      at: expect.any(String),
    });
    expect(JSON.stringify(entries)).not.toContain("prn_alice01");
  });

  it("accepts a P-256 key and each verification level", async () => {
    const p256 = generateSigner("ES256").publicJwk;
    const r = await w.registerAgent(opToken, { public_key: p256, verification_level: "self_declared" });
    expect(r.answer.body).toMatchObject({ verification_level: "self_declared", score: 450, fingerprint: keyId(p256) });
    expect((await w.registerAgent(opToken, { verification_level: "operator_verified" })).answer.body.score).toBe(600);
  });

  it("answers 409 when the agent id or the key is already registered, and logs nothing", async () => {
    const first = await w.registerAgent(opToken);
    const jwk = (await w.call("GET", `/v1/agents/${first.agent_id}`, opToken)).body.public_key;
    const before = (await logEntries()).length;
    const sameId = await w.call("POST", "/v1/agents", opToken, {
      agent_id: first.agent_id,
      principal_id: "prn_x",
      verification_level: "self_declared",
      public_key: freshPublicKey(),
    });
    expect(sameId).toMatchObject({ status: 409, body: { error: "agent id is already registered" } });
    const sameKey = await w.call("POST", "/v1/agents", otherOpToken, {
      agent_id: "another-agent",
      principal_id: "prn_x",
      verification_level: "self_declared",
      public_key: jwk,
    });
    expect(sameKey).toMatchObject({ status: 409, body: { error: "agent public key is already registered" } });
    expect((await w.call("GET", "/v1/agents/another-agent", readerToken)).status).toBe(404);
    expect((await logEntries()).length).toBe(before);
  });

  it("registers only one of two concurrent registrations of the same id", async () => {
    const body = () => ({ agent_id: "racer", principal_id: "prn_r", verification_level: "self_declared", public_key: freshPublicKey() });
    const answers = await Promise.all([1, 2, 3, 4].map(() => w.call("POST", "/v1/agents", opToken, body())));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409]);
    expect((await logEntries()).filter((e) => e.body.agent_id === "racer")).toHaveLength(1);
  });

  it("answers 400 for a private key, an unsupported key, a bad level and malformed ids", async () => {
    const signer = generateSigner();
    const withD = { ...signer.publicJwk, d: Buffer.alloc(32, 1).toString("base64url") };
    const cases: [Record<string, unknown>, string | RegExp][] = [
      [{ public_key: withD }, 'public_key: public key must not contain the private member "d"'],
      [{ public_key: { kty: "RSA", n: "AQAB", e: "AQAB" } }, /^public_key: /],
      [{ public_key: "not a jwk" }, "public_key must be an object"],
      [{ verification_level: "bank_verified" }, "verification_level must be one of: institution_attested, operator_verified, self_declared"],
      [{ principal_id: "alice@example.com" }, "principal_id must match ^prn_[A-Za-z0-9_-]{1,64}$"],
      [{ agent_id: "has/slash" }, /^agent_id must match /],
      [{ agent_id: undefined }, "agent_id is required"],
    ];
    for (const [over, error] of cases) {
      const body = { agent_id: "bad-one", principal_id: "prn_b", verification_level: "self_declared", public_key: freshPublicKey(), ...over };
      const r = await w.call("POST", "/v1/agents", opToken, body);
      expect(r.status, JSON.stringify(over)).toBe(400);
      if (typeof error === "string") expect(r.body.error).toBe(error);
      else expect(r.body.error).toMatch(error);
    }
    expect((await w.call("GET", "/v1/agents/bad-one", readerToken)).status).toBe(404);
  });

  it("answers 400 for each small-order Ed25519 point (all 14 encodings) and a non-canonical key spelling, naming why", async () => {
    for (const [i, x] of smallOrderEncodings().entries()) {
      const body = { agent_id: `weak-${i}`, principal_id: "prn_w", verification_level: "self_declared", public_key: ed25519Jwk(x) };
      const r = await w.call("POST", "/v1/agents", opToken, body);
      expect(r, x).toMatchObject({
        status: 400,
        body: {
          error:
            "public_key: public key is a small-order point of edwards25519 (the identity or a torsion point): a fixed signature would verify every payload",
        },
      });
      expect((await w.call("GET", `/v1/agents/weak-${i}`, readerToken)).status).toBe(404);
    }
    // The same key with a spare bit set in its last character would be another fingerprint.
    const jwk = freshPublicKey() as { x: string };
    const last = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".indexOf(jwk.x.at(-1) ?? "A");
    const respelled = { ...jwk, x: jwk.x.slice(0, -1) + ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last | 3] ?? "") };
    expect(Buffer.from(respelled.x, "base64url").equals(Buffer.from(jwk.x, "base64url")) && respelled.x !== jwk.x).toBe(true);
    const r = await w.call("POST", "/v1/agents", opToken, {
      agent_id: "respelled",
      principal_id: "prn_w",
      verification_level: "self_declared",
      public_key: respelled,
    });
    expect(r).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^public_key: public key member x must be 32 bytes of canonical base64url/) },
    });
  });

  it("answers 503 without the log signing key and stores nothing", async () => {
    const server = await startTestServer({ BUR_ADMIN_TOKEN: w.admin }, { pool: w.db.pool });
    try {
      const r = await fetch(`${server.url}/v1/agents`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${opToken}` },
        body: JSON.stringify({ agent_id: "unlogged", principal_id: "prn_u", verification_level: "self_declared", public_key: freshPublicKey() }),
      });
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ error: "SVC_LOG_SIGNING_SEED is not set" });
      expect(await getAgentForVerify(w.db.pool, "unlogged")).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});

describe("GET /v1/agents/{agent_id}", () => {
  it("shows principal_id to the owning organization only", async () => {
    const { agent_id, fingerprint } = await w.registerAgent(opToken, { principal_id: "prn_secret42" });
    const own = await w.call("GET", `/v1/agents/${agent_id}`, opToken);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ agent_id, status: "active", fingerprint, score: 600, operator_org_id: operator, principal_id: "prn_secret42" });
    for (const token of [readerToken, otherOpToken]) {
      const other = await w.call("GET", `/v1/agents/${agent_id}`, token);
      expect(other.status).toBe(200);
      expect(other.body).not.toHaveProperty("principal_id");
      expect(JSON.stringify(other.body)).not.toContain("prn_secret42");
      expect(other.body.fingerprint).toBe(fingerprint);
    }
  });

  it("answers 404 for an unknown agent", async () => {
    expect(await w.call("GET", "/v1/agents/nobody", readerToken)).toMatchObject({ status: 404, body: { error: "agent was not found" } });
  });
});

describe("PATCH /v1/agents/{agent_id}", () => {
  it("lets the owner suspend, reactivate and retire; retired is final; the verify path sees each status", async () => {
    const { agent_id, fingerprint } = await w.registerAgent(opToken);
    const v0 = await getAgentForVerify(w.db.pool, agent_id);
    expect(v0).toEqual({ agent_id, org_id: operator, status: "active", public_key: expect.objectContaining({ kty: "OKP" }), fingerprint });

    const set = (status: string, token = opToken) => w.call("PATCH", `/v1/agents/${agent_id}`, token, { status });
    expect(await set("suspended")).toMatchObject({ status: 200, body: { status: "suspended", principal_id: expect.any(String) } });
    expect((await getAgentForVerify(w.db.pool, agent_id))?.status).toBe("suspended");
    expect((await set("active")).body.status).toBe("active");
    expect((await set("retired")).body.status).toBe("retired");
    expect((await getAgentForVerify(w.db.pool, agent_id))?.status).toBe("retired");
    expect(await set("active")).toMatchObject({ status: 409, body: { error: "agent is retired and cannot change status" } });
    expect((await set("retired")).status).toBe(200);
  });

  it("refuses another operator (403), an unknown agent (404) and an unknown status (400)", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    expect(await w.call("PATCH", `/v1/agents/${agent_id}`, otherOpToken, { status: "suspended" })).toMatchObject({
      status: 403,
      body: { error: "agent belongs to another organization" },
    });
    expect((await getAgentForVerify(w.db.pool, agent_id))?.status).toBe("active");
    expect((await w.call("PATCH", "/v1/agents/nobody", opToken, { status: "suspended" })).status).toBe(404);
    expect(await w.call("PATCH", `/v1/agents/${agent_id}`, opToken, { status: "paused" })).toMatchObject({
      status: 400,
      body: { error: "status must be one of: active, suspended, retired" },
    });
  });

  it("getAgentForVerify is undefined for an unknown agent", async () => {
    expect(await getAgentForVerify(w.db.pool, "nobody")).toBeUndefined();
  });
});
