/**
 * POST /v1/admin/seed-demo over real HTTP: credential and flag statuses, the seeded data
 * (public deterministic keys that work, a demo agent whose verify answers ALLOW), idempotency
 * (also under concurrency), and that the admin token is never echoed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_SEED_ORGS, demoKeyToken } from "../../src/core/demo/seed.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let w: RegistryWorld;
let disabled: TestServer;

beforeAll(async () => {
  w = await startRegistryWorld({ BUR_ALLOW_DEMO_SEED: "1" });
  disabled = await startTestServer({ BUR_ADMIN_TOKEN: w.admin, SVC_LOG_SIGNING_SEED: w.seed, BUR_WEBHOOK_WORKER: "0" }, { pool: w.db.pool });
});
afterAll(async () => {
  await disabled?.close();
  await w?.close();
});

const seed = (token?: string | null) => w.call("POST", "/v1/admin/seed-demo", token);
const publicKeys = Object.fromEntries(DEMO_SEED_ORGS.map((o) => [o.role, demoKeyToken(o.keyLabel)]));

describe("POST /v1/admin/seed-demo", () => {
  it("401 without a bearer, 403 for another credential, 403 when the flag is unset", async () => {
    expect(await seed(null)).toMatchObject({ status: 401, body: { error: "bearer token required" } });
    expect(await seed("not-the-admin")).toMatchObject({ status: 403, body: { error: "admin token required" } });
    const operator = await w.createOrg("agent_operator");
    const { token } = await w.issueKey(operator);
    expect(await seed(token)).toMatchObject({ status: 403, body: { error: "admin token required" } });
    const off = await fetch(`${disabled.url}/v1/admin/seed-demo`, { method: "POST", headers: { authorization: `Bearer ${w.admin}` } });
    expect(off.status).toBe(403);
    expect(await off.json()).toEqual({ error: "demo seed is disabled" });
    const offNoBearer = await fetch(`${disabled.url}/v1/admin/seed-demo`, { method: "POST" });
    expect(offNoBearer.status).toBe(401);
  });

  it("seeds the public demo data once; the keys work and the demo agent's verify answers ALLOW", async () => {
    const first = await seed(w.admin);
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.body).toEqual({
      operator_key: publicKeys.operator,
      wallet_key: publicKeys.wallet,
      merchant_key: publicKeys.merchant,
      agent_id: "agent_demo",
      agreement_id: "agr_demo",
      already_present: false,
    });
    expect(JSON.stringify(first.body)).not.toContain(w.admin);
    const orgs = await w.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM orgs");

    const second = await seed(w.admin);
    expect(second.body).toEqual({ ...first.body, already_present: true });
    expect((await w.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM orgs")).rows[0]?.n).toBe(orgs.rows[0]?.n);

    const agent = await w.call("GET", "/v1/agents/agent_demo", publicKeys.wallet);
    expect(agent).toMatchObject({ status: 200, body: { agent_id: "agent_demo", status: "active", verification_level: "self_declared" } });
    const verdict = await w.call("POST", "/v1/verify", publicKeys.operator, {
      agent_id: "agent_demo",
      agreement_id: "agr_demo",
      action: {
        action_id: "act_seed_check",
        action_type: "purchase",
        amount: 12.5,
        currency: "USD",
        proposed_at: new Date().toISOString(),
        merchant: "Corner Market",
      },
    });
    expect(verdict.body).toMatchObject({ verdict: "ALLOW", agreement_id: "agr_demo", intent_id: "int_demo" });
    const above = await w.call("POST", "/v1/verify", publicKeys.operator, {
      agent_id: "agent_demo",
      action: { action_id: "act_seed_big", action_type: "purchase", amount: 75, currency: "USD", proposed_at: new Date().toISOString() },
    });
    expect(above.body.reasons).toContain("AMOUNT_ABOVE_INTENT_CEILING");

    // The demo wallet and merchant are the agreement's payment-side parties: they record outcomes; the operator cannot.
    const base = { agreement_id: "agr_demo", action_id: "act_seed_check" };
    expect((await w.call("POST", "/v1/verify/outcomes", publicKeys.operator, { ...base, outcome: "failed" })).status).toBe(403);
    expect((await w.call("POST", "/v1/verify/outcomes", publicKeys.wallet, { ...base, outcome: "authorized" })).body).toMatchObject({
      outcome: "authorized",
      replayed: false,
    });
    expect((await w.call("POST", "/v1/verify/outcomes", publicKeys.merchant, { ...base, outcome: "settled" })).body).toMatchObject({
      outcome: "settled",
      replayed: false,
    });
  });

  it("concurrent seeds on a fresh registry insert once", async () => {
    const fresh = await startRegistryWorld({ BUR_ALLOW_DEMO_SEED: "1" });
    try {
      const answers = await Promise.all(Array.from({ length: 4 }, () => fresh.call("POST", "/v1/admin/seed-demo", fresh.admin)));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(answers.filter((a) => a.body.already_present === false)).toHaveLength(1);
      expect((await fresh.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM orgs")).rows[0]?.n).toBe(3);
    } finally {
      await fresh.close();
    }
  });
});
