/**
 * Webhook delivery under the outbound policy and its fairness, with the real delivery worker
 * and local listeners only (127.0.0.1):
 * - a subscriber at http://127.0.0.1:<port> is delivered while loopback is allowed (the test
 *   settings) and refused, without a connection, when WRIT_OUTBOUND_ALLOW_LOOPBACK=0;
 * - one destination never has more than BUR_WEBHOOK_DESTINATION_CONCURRENCY requests open;
 * - 40 silent receivers (they accept and never answer) do not delay a healthy one: it has its
 *   alert within 2 s although each silent request is held for BUR_WEBHOOK_TIMEOUT_MS (5 s);
 * - fairness is per subscribing organization, not per port: one organization's 60 silent
 *   receivers on 60 ports of one host never take the slots another organization's alert needs
 *   (it is delivered before any of the silent requests has timed out).
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { generateSigner, keyId } from "../../src/core/jose/index.js";
import { insertAgent } from "../../src/store/agents.js";
import { createOrg } from "../../src/store/orgs.js";
import { withTransaction } from "../../src/store/pool.js";
import { createSubscription } from "../../src/store/subscriptions.js";
import { enqueueAlert, type Alert } from "../../src/webhooks/index.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** An HTTP receiver on 127.0.0.1 that counts TCP connections and requests per event. */
class Listener {
  connections = 0;
  open = 0;
  maxOpen = 0;
  readonly events: string[] = [];
  hang = false;
  private readonly held: ServerResponse[] = [];
  private readonly server: Server = createServer((req, res) => {
    this.open += 1;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    res.on("close", () => (this.open -= 1));
    req.resume();
    req.on("end", () => {
      this.events.push(String(req.headers["x-writ-event-id"]));
      if (this.hang) this.held.push(res);
      else res.writeHead(204).end();
    });
  });
  url = "";

  async start(): Promise<this> {
    this.server.on("connection", () => (this.connections += 1));
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  async close() {
    for (const r of this.held) r.destroy();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** A TCP listener on 127.0.0.1 that accepts connections and never says anything. */
async function silentListener(): Promise<{ url: string; accepted: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((s) => {
    accepted += 1;
    sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    accepted: () => accepted,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

let db: TestDatabase;
const seed = randomBytes(32).toString("hex");
const servers: TestServer[] = [];

async function startWorker(over: Record<string, string> = {}): Promise<TestServer> {
  const s = await startTestServer({ DATABASE_URL: db.url, SVC_LOG_SIGNING_SEED: seed, BUR_WEBHOOK_POLL_MS: "100", ...over });
  servers.push(s);
  return s;
}

let n = 0;
function alert(): Alert {
  n += 1;
  return { event_id: `evt_out_${n}_${randomBytes(4).toString("hex")}`, type: "revocation", agent_id: "agent-out", at: "2026-03-01T10:00:00Z", details: { n } };
}

async function enqueue(targets: { alert: Alert; url: string; subscription: string }[]): Promise<void> {
  await withTransaction(db.pool, async (c) => {
    for (const t of targets) await enqueueAlert(c, { subscription_id: t.subscription, webhook_url: t.url }, t.alert);
  });
}

async function row(eventId: string) {
  const { rows } = await db.pool.query<{ attempts: number; delivered_at: Date | null; failed_at: Date | null; last_error: string | null }>(
    "SELECT attempts, delivered_at, failed_at, last_error FROM webhook_outbox WHERE event_id = $1",
    [eventId],
  );
  return rows[0];
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await db?.drop();
});

describe("webhook delivery and the outbound policy", () => {
  it("delivers to http://127.0.0.1:<port> while loopback is allowed, and opens no connection to it when WRIT_OUTBOUND_ALLOW_LOOPBACK=0", async () => {
    const listener = await new Listener().start();
    try {
      await startWorker(); // the test settings allow loopback
      const ok = alert();
      await enqueue([{ alert: ok, url: listener.url, subscription: "sub_loop" }]);
      await expect.poll(() => listener.events.includes(ok.event_id), { timeout: 5000, interval: 20 }).toBe(true);
      await expect.poll(async () => (await row(ok.event_id))?.delivered_at, { timeout: 5000 }).toBeInstanceOf(Date);
      await Promise.all(servers.splice(0).map((s) => s.close()));

      const connections = listener.connections;
      await startWorker({
        WRIT_OUTBOUND_ALLOW_LOOPBACK: "0",
        BUR_WEBHOOK_MAX_ATTEMPTS: "2",
        BUR_WEBHOOK_BACKOFF_MIN_MS: "20",
        BUR_WEBHOOK_BACKOFF_MAX_MS: "40",
      });
      const refused = alert();
      await enqueue([{ alert: refused, url: listener.url, subscription: "sub_loop" }]);
      await expect.poll(async () => (await row(refused.event_id))?.failed_at, { timeout: 5000, interval: 20 }).toBeInstanceOf(Date);
      expect(await row(refused.event_id)).toMatchObject({
        attempts: 2,
        delivered_at: null,
        last_error: "destination refused by the outbound policy: 127.0.0.1 is a loopback address",
      });
      expect(listener.connections).toBe(connections);
      expect(listener.events).not.toContain(refused.event_id);
    } finally {
      await listener.close();
    }
  });
});

describe("webhook delivery is fair", () => {
  it("keeps at most BUR_WEBHOOK_DESTINATION_CONCURRENCY requests open to one destination", async () => {
    const listener = await new Listener().start();
    listener.hang = true;
    try {
      await startWorker({
        BUR_WEBHOOK_CONCURRENCY: "16",
        BUR_WEBHOOK_DESTINATION_CONCURRENCY: "2",
        BUR_WEBHOOK_TIMEOUT_MS: "800",
        BUR_WEBHOOK_MAX_ATTEMPTS: "1",
      });
      const alerts = Array.from({ length: 6 }, () => alert());
      await enqueue(alerts.map((a) => ({ alert: a, url: listener.url, subscription: "sub_one" })));
      for (const a of alerts) await expect.poll(async () => (await row(a.event_id))?.failed_at, { timeout: 10_000, interval: 20 }).toBeInstanceOf(Date);
      expect(listener.events).toHaveLength(6);
      expect(listener.maxOpen).toBe(2);
    } finally {
      await listener.close();
    }
  });

  it("delivers to a healthy receiver within 2 s while 40 silent receivers hold their requests for 5 s", async () => {
    const silent = await Promise.all(Array.from({ length: 40 }, () => silentListener()));
    const healthy = await new Listener().start();
    try {
      await startWorker({ BUR_WEBHOOK_TIMEOUT_MS: "5000" }); // the default concurrency settings
      const t0 = performance.now();
      await enqueue(silent.map((s, i) => ({ alert: alert(), url: s.url, subscription: `sub_silent_${i}` })));
      const wanted = alert();
      await enqueue([{ alert: wanted, url: healthy.url, subscription: "sub_healthy" }]);
      await expect.poll(() => healthy.events.includes(wanted.event_id), { timeout: 10_000, interval: 10 }).toBe(true);
      const took = performance.now() - t0;
      expect(took).toBeLessThan(2000);
      // The silent receivers were tried (their requests are the ones being held), not skipped.
      await expect.poll(() => silent.filter((s) => s.accepted() > 0).length, { timeout: 2000 }).toBe(40);
    } finally {
      await Promise.all(servers.splice(0).map((s) => s.close()));
      await Promise.all(silent.map((s) => s.close()));
      await healthy.close();
    }
  });

  it("counts an organization's receivers together: 60 silent ports of org A never delay org B's alert", async () => {
    const now = new Date();
    const subscribe = async (orgName: string, urls: string[]) => {
      const org = await createOrg(db.pool, { name: orgName, org_type: "agent_operator" }, now);
      const key = generateSigner("EdDSA");
      const agentId = `agent_${orgName.toLowerCase().replace(/\W/g, "_")}_${randomBytes(3).toString("hex")}`;
      const agent = await insertAgent(
        db.pool,
        {
          agent_id: agentId,
          org_id: org.org_id,
          principal_id: "prn_x",
          verification_level: "operator_verified",
          public_key: key.publicJwk,
          fingerprint: keyId(key.publicJwk),
        },
        now,
      );
      expect(agent.ok).toBe(true);
      const subs: string[] = [];
      for (const webhook_url of urls)
        subs.push(
          (await withTransaction(db.pool, (c) => createSubscription(c, { org_id: org.org_id, agent_id: agentId, webhook_url }, now))).subscription
            .subscription_id,
        );
      return subs;
    };
    const silent = await Promise.all(Array.from({ length: 60 }, () => silentListener()));
    const prompt = await new Listener().start();
    try {
      const subsA = await subscribe(
        "Org A",
        silent.map((s) => s.url),
      );
      const [subB = ""] = await subscribe("Org B", [prompt.url]);
      // Fewer slots than org A has ports: per port, A's silent requests would hold every slot.
      await startWorker({
        BUR_WEBHOOK_CONCURRENCY: "16",
        BUR_WEBHOOK_TIMEOUT_MS: "4000",
        BUR_WEBHOOK_CONNECT_TIMEOUT_MS: "4000",
        BUR_WEBHOOK_MAX_ATTEMPTS: "1",
      });
      const alertsA = subsA.map((subscription, i) => ({ alert: alert(), url: silent[i]?.url ?? "", subscription }));
      await enqueue(alertsA);
      // A's requests are out (held by the silent receivers) before B's alert exists.
      await expect.poll(() => silent.reduce((n, s) => n + s.accepted(), 0), { timeout: 5000, interval: 10 }).toBeGreaterThan(0);
      const wanted = alert();
      await enqueue([{ alert: wanted, url: prompt.url, subscription: subB }]);
      await expect.poll(() => prompt.events.includes(wanted.event_id), { timeout: 15_000, interval: 10 }).toBe(true);
      // Causality, not a stopwatch: when B had its alert, none of A's requests had ended (each
      // is held until the 4 s time limit), so B did not wait for a slot A held.
      const { rows } = await db.pool.query<{ ended: number }>(
        "SELECT count(*)::int AS ended FROM webhook_outbox WHERE subscription_id = ANY($1::text[]) AND (failed_at IS NOT NULL OR last_error IS NOT NULL)",
        [subsA],
      );
      expect(rows[0]?.ended).toBe(0);
      // Org A held at most BUR_WEBHOOK_ORG_CONCURRENCY (8) requests at once, not one per port.
      expect(silent.reduce((n, s) => n + s.accepted(), 0)).toBeLessThanOrEqual(8);
    } finally {
      await Promise.all(servers.splice(0).map((s) => s.close()));
      await Promise.all(silent.map((s) => s.close()));
      await prompt.close();
    }
  });
});
