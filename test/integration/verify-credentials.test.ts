/**
 * The credential matrix of the verify area's routes (POST /v1/verify, POST /v1/verify/outcomes,
 * DELETE /svc/delegations/{id}, POST /v1/admin/seed-demo), and their answers when storage is
 * not configured or Postgres cannot be reached.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "../../src/store/pool.js";
import { startTestServer } from "../helpers/server.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
let delegationId: string;
let agreementId: string;

beforeAll(async () => {
  w = await startVerifyWorld({ BUR_ALLOW_DEMO_SEED: "1" });
  const s = await storeAgreement(w, { mandates: [mandate(w.agentId, "i1")] });
  delegationId = s.delegationId as string;
  agreementId = s.agreementId;
});
afterAll(async () => {
  await w?.close();
});

interface Route {
  name: string;
  method: string;
  path: () => string;
  body: () => unknown;
}

const ROUTES: Route[] = [
  { name: "verify", method: "POST", path: () => "/v1/verify", body: () => ({ agent_id: w.agentId, action: action() }) },
  { name: "outcomes", method: "POST", path: () => "/v1/verify/outcomes", body: () => ({ agreement_id: agreementId, action_id: "none", outcome: "settled" }) },
  { name: "delete", method: "DELETE", path: () => `/svc/delegations/${delegationId}`, body: () => undefined },
  { name: "seed", method: "POST", path: () => "/v1/admin/seed-demo", body: () => undefined },
];

describe("credential matrix", () => {
  it("no bearer, an unknown token, a revoked key: 401 everywhere", async () => {
    const { key_id, token } = await w.issueKey(w.operatorOrg);
    expect((await w.call("DELETE", `/v1/orgs/${w.operatorOrg}/keys/${key_id}`, w.admin)).status).toBe(200);
    for (const r of ROUTES) {
      expect((await w.call(r.method, r.path(), null, r.body())).status, r.name).toBe(401);
      expect((await w.call(r.method, r.path(), `bur_${"A".repeat(43)}`, r.body())).status, r.name).toBe(r.name === "seed" ? 403 : 401);
      const revoked = await w.call(r.method, r.path(), token, r.body());
      expect(revoked.status, r.name).toBe(r.name === "seed" ? 403 : 401);
    }
  });

  it("the admin token: 403 on the organization routes, accepted by delete and seed", async () => {
    for (const r of ROUTES.slice(0, 2)) {
      expect(await w.call(r.method, r.path(), w.admin, r.body())).toMatchObject({ status: 403, body: { error: "an organization API key is required" } });
    }
    const seeded = await w.call("POST", "/v1/admin/seed-demo", w.admin);
    expect(seeded.status).toBe(200);
    const deleted = await w.call("DELETE", "/svc/delegations/del-none", w.admin);
    expect(deleted.status).toBe(404);
  });

  it("a key without the route's scope: 403; a key with it passes", async () => {
    const wallet = await w.createOrg("wallet");
    const walletKey = (await w.issueKey(wallet)).token; // no verify, no agents:write
    expect(await w.call("POST", "/v1/verify", walletKey, ROUTES[0]?.body())).toMatchObject({ status: 403, body: { error: "API key lacks the scope verify" } });
    // A wallet holds outcomes:write, but is no party of this agreement: the same 404 as an unknown one.
    expect(await w.call("POST", "/v1/verify/outcomes", walletKey, ROUTES[1]?.body())).toMatchObject({
      status: 404,
      body: { error: "agreement was not found" },
    });
    expect(await w.call("DELETE", `/svc/delegations/${delegationId}`, walletKey)).toMatchObject({
      status: 403,
      body: { error: "API key lacks the scope agents:write" },
    });
    expect((await w.call("POST", "/v1/admin/seed-demo", walletKey)).status).toBe(403);
    const verifyOnly = (await w.issueKey(w.operatorOrg, { scopes: ["verify"] })).token;
    expect((await w.call("POST", "/v1/verify", verifyOnly, ROUTES[0]?.body())).status).toBe(200);
    // The operator never records outcomes (it would release its own spend).
    expect(await w.call("POST", "/v1/verify/outcomes", verifyOnly, ROUTES[1]?.body())).toMatchObject({
      status: 403,
      body: { error: "API key lacks the scope outcomes:write" },
    });
    expect(await w.call("POST", "/v1/verify/outcomes", w.operatorKey, ROUTES[1]?.body())).toMatchObject({
      status: 403,
      body: { error: "API key lacks the scope outcomes:write" },
    });
    expect((await w.call("POST", "/v1/verify/outcomes", w.psp.key, ROUTES[1]?.body())).status).toBe(404); // a party: passes; the action is unknown
  });
});

describe("storage", () => {
  it("503 DATABASE_URL is not set without storage", async () => {
    const bare = await startTestServer({ BUR_ADMIN_TOKEN: w.admin, BUR_ALLOW_DEMO_SEED: "1" });
    try {
      for (const r of ROUTES) {
        const res = await fetch(`${bare.url}${r.path()}`, {
          method: r.method,
          headers: {
            authorization: `Bearer ${r.name === "seed" || r.name === "delete" ? w.admin : w.operatorKey}`,
            ...(r.body() ? { "content-type": "application/json" } : {}),
          },
          body: r.body() ? JSON.stringify(r.body()) : undefined,
        });
        expect(res.status, r.name).toBe(503);
        expect(await res.json(), r.name).toEqual({ error: "DATABASE_URL is not set" });
      }
    } finally {
      await bare.close();
    }
  });

  it("503 database unavailable when Postgres cannot be reached", async () => {
    // The app's pool goes through a TCP proxy that is then shut; the index listens directly.
    const target = new URL(w.db.url);
    const sockets = new Set<Socket>();
    const proxy: Server = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
        s.on("error", () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const proxied = new URL(w.db.url);
    proxied.hostname = "127.0.0.1";
    proxied.port = String((proxy.address() as AddressInfo).port);
    const pool = createPool(proxied.toString(), { max: 3, connectionTimeoutMillis: 1000 });
    const server = await startTestServer({ BUR_WEBHOOK_WORKER: "0", DATABASE_URL: w.db.url, SVC_LOG_SIGNING_SEED: w.seed }, { pool });
    try {
      const body = JSON.stringify({ agent_id: w.agentId, action: action() });
      const post = () =>
        fetch(`${server.url}/v1/verify`, { method: "POST", headers: { authorization: `Bearer ${w.operatorKey}`, "content-type": "application/json" }, body });
      expect((await post()).status).toBe(200);
      const closed = new Promise<void>((resolve) => proxy.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
      const down = await post();
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ error: "database unavailable" });
    } finally {
      await server.close();
      await pool.end();
    }
  });
});
