/**
 * Subscriptions: the webhook URL rule, 404 for an unknown agent, idempotent repeats, listing
 * and ending (tenant isolated), and `alertSubscribers`, the fan-out the verify path uses for
 * revocation alerts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/store/pool.js";
import { alertSubscribers, newEventId } from "../../src/store/subscriptions.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";
import { startTestServer } from "../helpers/server.js";

let w: RegistryWorld;
let opToken = "";
let walletOrg = "";
let walletToken = "";
let merchantToken = "";
let agentId = "";

function subscribe(token: string, webhook_url: unknown, agent_id: string = agentId) {
  return w.call("POST", "/v1/subscriptions", token, { agent_id, webhook_url });
}

beforeAll(async () => {
  w = await startRegistryWorld();
  opToken = (await w.issueKey(await w.createOrg("agent_operator"))).token;
  walletOrg = await w.createOrg("wallet");
  walletToken = (await w.issueKey(walletOrg)).token;
  merchantToken = (await w.issueKey(await w.createOrg("merchant"))).token;
  agentId = (await w.registerAgent(opToken)).agent_id;
});

afterAll(async () => {
  await w?.close();
});

describe("POST /v1/subscriptions", () => {
  it("subscribes: 201 {subscription_id, agent_id, webhook_url}, stored active for the organization", async () => {
    const r = await subscribe(walletToken, "https://hooks.example.com/bureau");
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      subscription_id: expect.stringMatching(/^sub_[0-9a-f]{24}$/),
      agent_id: agentId,
      webhook_url: "https://hooks.example.com/bureau",
    });
    const { rows } = await w.db.pool.query("SELECT org_id, agent_id, webhook_url, active FROM subscriptions WHERE subscription_id = $1", [
      r.body.subscription_id,
    ]);
    expect(rows).toEqual([{ org_id: walletOrg, agent_id: agentId, webhook_url: "https://hooks.example.com/bureau", active: true }]);
  });

  it("returns the existing subscription (200) for a repeat", async () => {
    const a = await subscribe(walletToken, "https://hooks.example.com/repeat");
    const b = await subscribe(walletToken, "https://HOOKS.example.com/repeat");
    expect(a.status).toBe(201);
    expect(b.status).toBe(200);
    expect(b.body.subscription_id).toBe(a.body.subscription_id);
  });

  it("accepts https anywhere and http on localhost, 127.0.0.0/8 and [::1]", async () => {
    expect((await subscribe(walletToken, "https://hooks.example.com/a\u0000b")).body.webhook_url).toBe("https://hooks.example.com/a%00b");
    for (const url of ["https://10.1.2.3/x", "http://localhost:9000/h", "http://127.0.0.1/h", "http://127.5.6.7:81/", "http://[::1]:8080/h"]) {
      expect((await subscribe(walletToken, url)).status, url).toBe(201);
    }
  });

  it("answers 400 for any other URL", async () => {
    const cases: [unknown, string][] = [
      ["http://hooks.example.com/x", "webhook_url must be https, or http on localhost"],
      ["http://10.0.0.1/x", "webhook_url must be https, or http on localhost"],
      ["ftp://hooks.example.com/x", "webhook_url must be https, or http on localhost"],
      ["javascript:alert(1)", "webhook_url must be https, or http on localhost"],
      ["https://user:secret@hooks.example.com/x", "webhook_url must not carry credentials"],
      ["https://hooks.example.com/x#frag", "webhook_url must not carry a fragment"],
      ["not a url", "webhook_url is not a valid URL"],
      ["", "webhook_url must not be empty"],
      [{ href: "https://x" }, "webhook_url must be a string"],
    ];
    for (const [url, error] of cases) {
      expect(await subscribe(walletToken, url), String(url)).toMatchObject({ status: 400, body: { error } });
    }
    expect(await w.call("POST", "/v1/subscriptions", walletToken, { agent_id: agentId })).toMatchObject({
      status: 400,
      body: { error: "webhook_url is required" },
    });
  });

  it("answers 404 for an unknown agent", async () => {
    expect(await subscribe(walletToken, "https://hooks.example.com/x", "nobody")).toMatchObject({
      status: 404,
      body: { error: "agent was not found" },
    });
  });
});

describe("GET and DELETE /v1/subscriptions", () => {
  it("lists and ends only the organization's own subscriptions", async () => {
    const mine = await subscribe(merchantToken, "https://merchant.example.com/hook");
    const list = await w.call("GET", "/v1/subscriptions", merchantToken);
    expect(list.status).toBe(200);
    expect(list.body.subscriptions).toEqual([
      {
        subscription_id: mine.body.subscription_id,
        agent_id: agentId,
        webhook_url: "https://merchant.example.com/hook",
        created_at: expect.any(String),
        active: true,
      },
    ]);
    const walletList = (await w.call("GET", "/v1/subscriptions", walletToken)).body.subscriptions as { subscription_id: string }[];
    expect(walletList.map((s) => s.subscription_id)).not.toContain(mine.body.subscription_id);

    expect(await w.call("DELETE", `/v1/subscriptions/${mine.body.subscription_id as string}`, walletToken)).toMatchObject({
      status: 404,
      body: { error: "subscription was not found" },
    });
    const ended = await w.call("DELETE", `/v1/subscriptions/${mine.body.subscription_id as string}`, merchantToken);
    expect(ended).toMatchObject({ status: 200, body: { subscription_id: mine.body.subscription_id, active: false } });
    expect((await w.call("GET", "/v1/subscriptions", merchantToken)).body.subscriptions).toEqual([]);
    expect((await w.call("DELETE", "/v1/subscriptions/sub_000000000000000000000000", merchantToken)).status).toBe(404);
    // Subscribing again after ending creates a new subscription.
    const again = await subscribe(merchantToken, "https://merchant.example.com/hook");
    expect(again.status).toBe(201);
    expect(again.body.subscription_id).not.toBe(mine.body.subscription_id);
  });
});

describe("alertSubscribers", () => {
  it("enqueues one event for every active subscription on the agent, only if the transaction commits", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    const a = await subscribe(walletToken, "https://a.example.com/h", agent_id);
    const b = await subscribe(merchantToken, "https://b.example.com/h", agent_id);
    const c = await subscribe(merchantToken, "https://c.example.com/h", agent_id);
    await w.call("DELETE", `/v1/subscriptions/${c.body.subscription_id as string}`, merchantToken);

    const alert = { event_id: newEventId(), type: "revocation" as const, agent_id, at: "2026-03-01T00:00:00Z", details: { agreement_id: "agr-1" } };
    await expect(
      withTransaction(w.db.pool, async (client) => {
        await alertSubscribers(client, agent_id, alert);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    const count = async () =>
      (await w.db.pool.query("SELECT subscription_id, event_id FROM webhook_outbox WHERE payload->>'agent_id' = $1 ORDER BY subscription_id", [agent_id])).rows;
    expect(await count()).toEqual([]);

    const n = await withTransaction(w.db.pool, (client) => alertSubscribers(client, agent_id, alert));
    expect(n).toBe(2);
    expect(await count()).toEqual(
      [a.body.subscription_id, b.body.subscription_id].sort().map((subscription_id) => ({ subscription_id, event_id: alert.event_id })),
    );
    // The same event again adds nothing.
    await withTransaction(w.db.pool, (client) => alertSubscribers(client, agent_id, alert));
    expect(await count()).toHaveLength(2);
  });
});

describe("the per-organization subscription cap (BUR_MAX_SUBSCRIPTIONS_PER_ORG)", () => {
  it("refuses a NEW subscription past the cap with 409, never a repeat; deleting one makes room; other organizations are not affected", async () => {
    const capped = await startTestServer({ BUR_ADMIN_TOKEN: w.admin, BUR_WEBHOOK_WORKER: "0", BUR_MAX_SUBSCRIPTIONS_PER_ORG: "3" }, { pool: w.db.pool });
    const post = async (token: string, url: string) => {
      const r = await fetch(`${capped.url}/v1/subscriptions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ agent_id: agentId, webhook_url: url }),
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    try {
      const token = (await w.issueKey(await w.createOrg("wallet"))).token;
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await post(token, `https://hooks.example.com/cap/${i}`));
      expect(made.map((m) => m.status)).toEqual([201, 201, 201]);
      expect(await post(token, "https://hooks.example.com/cap/3")).toEqual({ status: 409, body: { error: "organization reached its subscription cap (3)" } });
      expect((await post(token, "https://hooks.example.com/cap/0")).status).toBe(200); // a repeat is never refused
      expect((await post((await w.issueKey(await w.createOrg("wallet"))).token, "https://hooks.example.com/cap/3")).status).toBe(201);
      expect((await w.call("DELETE", `/v1/subscriptions/${made[0]?.body.subscription_id as string}`, token)).status).toBe(200);
      expect((await post(token, "https://hooks.example.com/cap/3")).status).toBe(201);
    } finally {
      await capped.close();
    }
  });

  it("holds under concurrent requests: of 8 at once with a cap of 3, exactly 3 are created", async () => {
    const capped = await startTestServer({ BUR_ADMIN_TOKEN: w.admin, BUR_WEBHOOK_WORKER: "0", BUR_MAX_SUBSCRIPTIONS_PER_ORG: "3" }, { pool: w.db.pool });
    try {
      const token = (await w.issueKey(await w.createOrg("wallet"))).token;
      const statuses = await Promise.all(
        Array.from(
          { length: 8 },
          async (_, i) =>
            (
              await fetch(`${capped.url}/v1/subscriptions`, {
                method: "POST",
                headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
                body: JSON.stringify({ agent_id: agentId, webhook_url: `https://hooks.example.com/race/${i}` }),
              })
            ).status,
        ),
      );
      expect(statuses.filter((s) => s === 201)).toHaveLength(3);
      expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    } finally {
      await capped.close();
    }
  });
});
