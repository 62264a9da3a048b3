/**
 * Agents' signed requests against a real server and Postgres (src/api/routes/agents/
 * signed-requests.ts): the key directory (signed, cached for 300 s, only active agents), and
 * `POST /v1/agents/verify-request` — who signed, its operator, status and trust score; a
 * replayed nonce refused by ANOTHER data-plane process on the same database; a tampered
 * request; an agent suspended after signing; and whether a live grant could pay now, which
 * spends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIRECTORY_PATH, signRequest, webKeyId, type HttpRequestLike } from "../../src/core/httpsig/index.js";
import { demoAgentSigner } from "../../src/core/demo/index.js";
import { generateSigner, privateJwk, type Signer } from "../../src/core/jose/index.js";
import { KeyDirectoryCache, signAgentRequest, verifyAgentRequest } from "../../src/client/index.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let w: RegistryWorld;
let second: TestServer;
let operator: string;
let merchant: string;
let seeded: Record<string, unknown>;

beforeAll(async () => {
  w = await startRegistryWorld({ BUR_ALLOW_DEMO_SEED: "1" });
  // A second data-plane process on the same database (its own caches and revocation index).
  second = await startTestServer({ BUR_ADMIN_TOKEN: w.admin, SVC_LOG_SIGNING_SEED: w.seed, BUR_WEBHOOK_WORKER: "0" }, { pool: w.db.pool });
  seeded = (await w.call("POST", "/v1/admin/seed-demo", w.admin)).body;
  operator = (await w.issueKey(await w.createOrg("agent_operator", "Acme agents"))).token;
  merchant = (await w.issueKey(await w.createOrg("merchant", "Corner Market"))).token;
});
afterAll(async () => {
  await second?.close();
  await w?.close();
});

async function newAgent(): Promise<{ agent_id: string; signer: Signer }> {
  const signer = generateSigner();
  const { agent_id } = await w.registerAgent(operator, { public_key: signer.publicJwk });
  return { agent_id, signer };
}

async function signedBy(signer: Signer, url = "https://shop.example/cart"): Promise<HttpRequestLike> {
  const request: HttpRequestLike = { method: "GET", url, headers: { accept: "application/json" } };
  const fields = await signRequest(request, { signer, directoryUrl: `${w.server.url}${DIRECTORY_PATH}`, components: ["@method", "@path"] });
  return { ...request, headers: { ...request.headers, ...fields } };
}

/** The agent ids of the key directory `server` answers. */
async function listed(server: string): Promise<string[]> {
  const dir = (await (await fetch(`${server}${DIRECTORY_PATH}`)).json()) as { keys: Array<{ agent_id: string }> };
  return dir.keys.map((k) => k.agent_id);
}

/** The Signature field of the key directory `server` answers. */
async function signatureOf(server: string): Promise<string | null> {
  return (await fetch(`${server}${DIRECTORY_PATH}`)).headers.get("signature");
}

/** Waits (at most 3 s, polling) until `done` holds. */
async function until(done: () => Promise<boolean>, ms = 3000): Promise<void> {
  const start = performance.now();
  while (!(await done()) && performance.now() - start < ms) await new Promise((r) => setTimeout(r, 10));
}

async function verifyAt(server: string, body: unknown, token = merchant) {
  const r = await fetch(`${server}/v1/agents/verify-request`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe("the key directory", () => {
  it("lists registered active agents, signed by the log key, cached for 300 s; writ/client checks it", async () => {
    const { agent_id, signer } = await newAgent();
    const r = await fetch(`${w.server.url}${DIRECTORY_PATH}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/http-message-signatures-directory\+json/);
    expect(r.headers.get("cache-control")).toBe("public, max-age=300");
    expect(r.headers.get("signature-input")).toContain('tag="http-message-signatures-directory"');
    const body = (await r.json()) as { keys: Array<Record<string, string>> };
    expect(body.keys).toContainEqual(expect.objectContaining({ kid: webKeyId(signer.publicJwk), agent_id, kty: "OKP", crv: "Ed25519" }));
    // The merchant's offline check: Writ's log key read from /.well-known/svc-keys.json, the directory verified.
    const directory = new KeyDirectoryCache({ server: w.server.url });
    const fields = await signAgentRequest({ method: "GET", url: "https://shop.example/cart", headers: {} }, { key: privateJwk(signer), server: w.server.url });
    const check = await verifyAgentRequest({ method: "GET", url: "https://shop.example/cart", headers: fields }, { directory });
    expect(check).toMatchObject({ verified: true, agent: { agent_id } });
  });
});

describe("POST /v1/agents/verify-request", () => {
  it("answers who signed: the agent, its operator, status and trust score; a replay is refused by another process", async () => {
    const { agent_id, signer } = await newAgent();
    const request = await signedBy(signer);
    const first = await verifyAt(w.server.url, { request });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      verified: true,
      keyid: webKeyId(signer.publicJwk),
      agent: {
        agent_id,
        status: "active",
        verification_level: "operator_verified",
        trust_score: expect.any(Number),
        operator_org_id: expect.stringMatching(/^org_/),
      },
      signature: {
        tag: "web-bot-auth",
        components: ['"@authority"', '"@method"', '"@path"', '"signature-agent"'],
        signature_agent: `sig1="${w.server.url}${DIRECTORY_PATH}"`,
      },
    });
    expect(first.body).not.toHaveProperty("reason");
    const replay = await verifyAt(second.url, { request });
    expect(replay.body).toMatchObject({ verified: false, reason: "REQUEST_NONCE_REPLAYED", agent: { agent_id } });
  });

  it("refuses a tampered request, an unknown key and an unsigned one, each with its reason", async () => {
    const { signer } = await newAgent();
    const request = await signedBy(signer);
    expect((await verifyAt(w.server.url, { request: { ...request, url: "https://shop.example/admin" } })).body).toMatchObject({
      verified: false,
      reason: "REQUEST_SIGNATURE_INVALID",
    });
    expect((await verifyAt(w.server.url, { request: await signedBy(generateSigner()) })).body).toMatchObject({
      verified: false,
      reason: "REQUEST_KEY_UNKNOWN",
    });
    expect((await verifyAt(w.server.url, { request: { method: "GET", url: "https://shop.example/", headers: {} } })).body).toMatchObject({
      verified: false,
      reason: "REQUEST_SIGNATURE_MISSING",
    });
  });

  it("refuses a request of an agent suspended after signing, at once, and the directory drops it", async () => {
    const { agent_id, signer } = await newAgent();
    const request = await signedBy(signer);
    // Both processes keep their signed directory, with the agent (the second once its registration's notice came).
    await until(async () => (await listed(second.url)).includes(agent_id));
    expect(await listed(w.server.url)).toContain(agent_id);
    expect(await listed(second.url)).toContain(agent_id);
    // Kept: the same signed answer again.
    for (const server of [w.server.url, second.url]) expect(await signatureOf(server)).toBe(await signatureOf(server));
    const patched = await w.call("PATCH", `/v1/agents/${agent_id}`, operator, { status: "suspended" });
    expect(patched.status).toBe(200);
    // Both processes answer from Postgres: no wait for a cache.
    expect((await verifyAt(second.url, { request })).body).toMatchObject({
      verified: false,
      reason: "AGENT_NOT_ACTIVE",
      agent: { agent_id, status: "suspended" },
    });
    // The process that suspended it drops its kept directory at once; the other on the change notice.
    expect(await listed(w.server.url)).not.toContain(agent_id);
    await until(async () => !(await listed(second.url)).includes(agent_id));
    expect(await listed(second.url)).not.toContain(agent_id);
  });

  it("says whether a live grant could pay this merchant now, and spends nothing", async () => {
    const request = await signedBy(demoAgentSigner());
    const payment = { amount: 12.5, currency: "USD", merchant: "Corner Market" };
    const yes = await verifyAt(w.server.url, { request, payment });
    expect(yes.body).toMatchObject({
      verified: true,
      agent: { agent_id: "agent_demo" },
      grant: { live: true, agreement_id: "agr_demo", verdict: "ALLOW", reasons: [] },
    });
    const no = await verifyAt(w.server.url, { request: await signedBy(demoAgentSigner()), payment: { ...payment, amount: 5000 } });
    expect(no.body).toMatchObject({ verified: true, grant: { live: false, agreement_id: "agr_demo", verdict: "DENY" } });
    const ledger = await w.call("GET", "/v1/agreements/agr_demo/ledger", seeded.operator_key as string);
    expect(ledger.body).toMatchObject({ ledger_sequence: 0, entries: [] });
  });

  it("is refused without a key (401), and a body that is not a request is a 400", async () => {
    const request = await signedBy(generateSigner());
    expect((await verifyAt(w.server.url, { request }, "")).status).toBe(401);
    expect((await verifyAt(w.server.url, { request: { ...request, url: "/cart" } })).status).toBe(400);
    expect((await verifyAt(w.server.url, { request: { ...request, headers: { signature: 7 } } })).status).toBe(400);
    expect((await verifyAt(w.server.url, { request, payment: { amount: 1, currency: "usd", merchant: "m" } })).status).toBe(400);
  });
});
