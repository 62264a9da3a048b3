import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/store/pool.js";
import { enqueueAlert, verifyAlert, type Alert, type AlertPayload } from "../../src/webhooks/index.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** What the receiver saw of one request. */
interface Received {
  eventId: string;
  attempt: number;
  contentType: string | undefined;
  body: unknown;
  /** The alert, when its signature verified with the published key; else null. */
  verified: AlertPayload | null;
  status: number | "hang";
}

type Behaviour = (eventId: string, priorRequestsForEvent: number) => number | "hang";

/** A subscriber: node:http on 127.0.0.1, port 0, verifying every alert with the server's published key. */
class Receiver {
  readonly received: Received[] = [];
  behaviour: Behaviour = () => 200;
  publicKey: unknown = null;
  open = 0;
  maxOpen = 0;
  private readonly hanging: ServerResponse[] = [];
  private server!: Server;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    this.open += 1;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    res.on("close", () => (this.open -= 1));
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const eventId = String(req.headers["x-writ-event-id"]);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
    const verified = await verifyAlert(body, this.publicKey).catch(() => null);
    const prior = this.received.filter((r) => r.eventId === eventId).length;
    const status = this.behaviour(eventId, prior);
    this.received.push({ eventId, attempt: Number(req.headers["x-writ-delivery-attempt"]), contentType: req.headers["content-type"], body, verified, status });
    if (status === "hang") this.hanging.push(res);
    else res.writeHead(status, { "content-type": "application/json" }).end("{}");
  }

  /** Successful (2xx) receipts per event id. */
  successes(eventId: string): number {
    return this.received.filter((r) => r.eventId === eventId && typeof r.status === "number" && r.status < 300).length;
  }

  async close() {
    for (const r of this.hanging) r.destroy();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

let db: TestDatabase;
let receiver: Receiver;
const seed = randomBytes(32).toString("hex");
const servers: TestServer[] = [];
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A server owning its pool on the test database, with short retry settings. */
async function startServer(over: Record<string, string> = {}): Promise<TestServer> {
  const s = await startTestServer({
    DATABASE_URL: db.url,
    SVC_LOG_SIGNING_SEED: seed,
    BUR_WEBHOOK_BACKOFF_MIN_MS: "50",
    BUR_WEBHOOK_BACKOFF_MAX_MS: "200",
    BUR_WEBHOOK_POLL_MS: "100",
    BUR_WEBHOOK_TIMEOUT_MS: "1000",
    ...over,
  });
  servers.push(s);
  return s;
}

let n = 0;
function alertFor(over: Partial<Alert> = {}): Alert {
  n += 1;
  return {
    event_id: `evt_${n}_${randomBytes(4).toString("hex")}`,
    type: "revocation",
    agent_id: "agent-7",
    at: "2026-03-01T10:00:00Z",
    details: { n },
    ...over,
  };
}

async function enqueue(alert: Alert, subscription = "sub_a", url = receiver.url) {
  await withTransaction(db.pool, (c) => enqueueAlert(c, { subscription_id: subscription, webhook_url: url }, alert));
}

async function row(eventId: string, subscription = "sub_a") {
  const { rows } = await db.pool.query<{
    attempts: number;
    delivered_at: Date | null;
    failed_at: Date | null;
    next_attempt_at: Date | null;
    last_error: string | null;
    created_at: Date;
  }>("SELECT attempts, delivered_at, failed_at, next_attempt_at, last_error, created_at FROM webhook_outbox WHERE event_id = $1 AND subscription_id = $2", [
    eventId,
    subscription,
  ]);
  return rows[0];
}

async function metric(server: TestServer, result: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const m = new RegExp(`^writ_webhook_deliveries_total\\{result="${result}"\\} (\\d+)`, "m").exec(text);
  return m ? Number(m[1]) : 0;
}

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await new Receiver().start();
  // The key every alert must verify with: fetched from the server's published key list.
  const s = await startTestServer({ SVC_LOG_SIGNING_SEED: seed });
  const list = (await (await fetch(`${s.url}/.well-known/svc-keys.json`)).json()) as { keys: { public_key: unknown }[] };
  await s.close();
  receiver.publicKey = list.keys[0]?.public_key;
  expect(receiver.publicKey).toBeTruthy();
});

afterEach(async () => {
  while (servers.length) await servers.pop()?.close();
  await db.pool.query("DELETE FROM webhook_outbox");
  receiver.behaviour = () => 200;
});

afterAll(async () => {
  await receiver?.close();
  await db?.drop();
});

describe("webhook delivery", () => {
  it("delivers a signed alert promptly (woken by NOTIFY, not the poll) that verifies with the published key", async () => {
    const server = await startServer({ BUR_WEBHOOK_POLL_MS: "60000" });
    await delay(200); // the worker is listening
    const alert = alertFor({ type: "score_drop", details: { from: 720, to: 660 } });
    const t0 = Date.now();
    await enqueue(alert);
    await expect.poll(() => receiver.successes(alert.event_id), { timeout: 2000, interval: 10 }).toBe(1);
    expect(Date.now() - t0).toBeLessThan(1000);
    const got = receiver.received.find((r) => r.eventId === alert.event_id);
    expect(got?.contentType).toBe("application/json");
    expect(got?.attempt).toBe(1);
    expect(got?.verified).toEqual({ svc_bureau_alert: 1, subscription_id: "sub_a", ...alert });
    expect(Object.keys(got?.body as object).sort()).toEqual([
      "agent_id",
      "at",
      "details",
      "event_id",
      "signature",
      "subscription_id",
      "svc_bureau_alert",
      "type",
    ]);
    await expect.poll(async () => (await row(alert.event_id))?.delivered_at).toBeInstanceOf(Date);
    expect(await metric(server, "delivered")).toBe(1);
  });

  it("sends an alert iff the enqueuing transaction commits, once per subscription and event", async () => {
    await startServer();
    const rolledBack = alertFor();
    await expect(
      withTransaction(db.pool, async (c) => {
        await enqueueAlert(c, { subscription_id: "sub_a", webhook_url: receiver.url }, rolledBack);
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");
    const twice = alertFor();
    await enqueue(twice);
    await enqueue(twice); // the same event again: no second row
    await enqueue(twice, "sub_b"); // another subscription: its own row
    await expect.poll(() => receiver.successes(twice.event_id), { timeout: 3000 }).toBe(2);
    await delay(400);
    expect(receiver.successes(twice.event_id)).toBe(2);
    expect(
      receiver.received
        .filter((r) => r.eventId === twice.event_id)
        .map((r) => (r.verified as AlertPayload).subscription_id)
        .sort(),
    ).toEqual(["sub_a", "sub_b"]);
    expect(receiver.received.some((r) => r.eventId === rolledBack.event_id)).toBe(false);
    expect(await row(rolledBack.event_id)).toBeUndefined();
  });

  it("retries a receiver that fails three times (HTTP 500), then delivers each event exactly once", async () => {
    const server = await startServer();
    receiver.behaviour = (_id, prior) => (prior < 3 ? 500 : 200);
    const alerts = [alertFor(), alertFor(), alertFor()];
    for (const a of alerts) await enqueue(a);
    for (const a of alerts) await expect.poll(() => receiver.successes(a.event_id), { timeout: 5000 }).toBe(1);
    await delay(500); // nothing more arrives
    for (const a of alerts) {
      const tries = receiver.received.filter((r) => r.eventId === a.event_id);
      expect(tries.map((r) => r.attempt)).toEqual([1, 2, 3, 4]);
      expect(tries.map((r) => r.status)).toEqual([500, 500, 500, 200]);
      expect(tries.every((r) => r.verified !== null)).toBe(true);
      expect(receiver.successes(a.event_id)).toBe(1);
      const r = await row(a.event_id);
      expect(r).toMatchObject({ attempts: 4, failed_at: null, next_attempt_at: null, last_error: null });
      expect(r?.delivered_at).toBeInstanceOf(Date);
    }
    expect(await metric(server, "retry")).toBe(9);
    expect(await metric(server, "delivered")).toBe(3);
  });

  it("delivers pending alerts after a restart (they are rows)", async () => {
    receiver.behaviour = () => 503;
    const first = await startServer();
    const pending = [alertFor(), alertFor()];
    for (const a of pending) await enqueue(a);
    for (const a of pending) await expect.poll(() => receiver.received.filter((r) => r.eventId === a.event_id).length).toBeGreaterThanOrEqual(1);
    await first.close();
    servers.splice(servers.indexOf(first), 1);
    for (const a of pending) {
      const r = await row(a.event_id);
      expect(r?.delivered_at).toBeNull();
      expect(r?.next_attempt_at).toBeInstanceOf(Date);
      expect(r?.failed_at).toBeNull();
      // The last attempt either got the 503 or was a retry in flight when the server stopped.
      expect(["HTTP 503", "delivery interrupted by shutdown"]).toContain(r?.last_error);
    }
    // Enqueued while no worker runs at all.
    const whileDown = alertFor();
    await enqueue(whileDown);
    await delay(300);
    expect(receiver.received.some((r) => r.eventId === whileDown.event_id)).toBe(false);

    receiver.behaviour = () => 200;
    await startServer(); // a new process on the same database
    for (const a of [...pending, whileDown]) {
      await expect.poll(() => receiver.successes(a.event_id), { timeout: 5000 }).toBe(1);
      await expect.poll(async () => (await row(a.event_id))?.delivered_at).toBeInstanceOf(Date);
    }
    // The attempt count carried over the restart.
    for (const a of pending) expect(receiver.received.find((r) => r.eventId === a.event_id && r.status === 200)?.attempt).toBeGreaterThan(1);
  });

  it("gives an interrupted delivery back when the server stops, without waiting for the receiver", async () => {
    receiver.behaviour = () => "hang";
    const first = await startServer({ BUR_WEBHOOK_TIMEOUT_MS: "20000" });
    const a = alertFor();
    await enqueue(a);
    await expect.poll(() => receiver.open).toBe(1);
    const t0 = Date.now();
    await first.close();
    servers.splice(servers.indexOf(first), 1);
    expect(Date.now() - t0).toBeLessThan(2000);
    const r = await row(a.event_id);
    expect(r).toMatchObject({ attempts: 0, delivered_at: null, failed_at: null, last_error: "delivery interrupted by shutdown" });
    receiver.behaviour = () => 200;
    await startServer();
    await expect.poll(() => receiver.successes(a.event_id), { timeout: 3000 }).toBe(1);
    expect(receiver.received.filter((x) => x.eventId === a.event_id).map((x) => x.attempt)).toEqual([1, 1]);
  });

  it("keeps API answers fast while deliveries hang, bounds them in time and in number", async () => {
    const server = await startServer({
      BUR_WEBHOOK_TIMEOUT_MS: "1200",
      BUR_WEBHOOK_CONCURRENCY: "4",
      BUR_WEBHOOK_DESTINATION_CONCURRENCY: "8",
      BUR_WEBHOOK_MAX_ATTEMPTS: "1",
    });
    receiver.maxOpen = 0;
    receiver.behaviour = () => "hang";
    const alerts = Array.from({ length: 8 }, () => alertFor());
    for (const a of alerts) await enqueue(a);
    await expect.poll(() => receiver.open, { timeout: 3000 }).toBe(4);
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const r = await fetch(`${server.url}/v1/revocations`);
      expect(r.status).toBe(200);
      await r.json();
      latencies.push(performance.now() - t0);
    }
    expect(Math.max(...latencies)).toBeLessThan(500); // a delivery hangs 1200 ms
    // Every hanging request ends at the time limit; with one attempt allowed the rows fail for good.
    for (const a of alerts) {
      await expect.poll(async () => (await row(a.event_id))?.failed_at, { timeout: 10_000 }).toBeInstanceOf(Date);
      expect((await row(a.event_id))?.last_error).toBe("timed out after 1200 ms");
    }
    expect(receiver.maxOpen).toBe(4);
    expect(await metric(server, "failed")).toBe(8);
  });

  it("backs off from a dead port (connection refused) and gives up after the last attempt", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const deadUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/hook`;
    await new Promise((r) => probe.close(r));
    const server = await startServer({ BUR_WEBHOOK_MAX_ATTEMPTS: "4", BUR_WEBHOOK_BACKOFF_MIN_MS: "100", BUR_WEBHOOK_BACKOFF_MAX_MS: "400" });
    const a = alertFor();
    await enqueue(a, "sub_dead", deadUrl);
    await expect.poll(async () => (await row(a.event_id, "sub_dead"))?.failed_at, { timeout: 5000 }).toBeInstanceOf(Date);
    const r = await row(a.event_id, "sub_dead");
    expect(r).toMatchObject({ attempts: 4, delivered_at: null, next_attempt_at: null, last_error: "request failed: ECONNREFUSED" });
    // Three waits of at least half their base: 50 + 100 + 200 ms.
    expect((r?.failed_at as Date).getTime() - (r?.created_at as Date).getTime()).toBeGreaterThanOrEqual(350);
    expect(await metric(server, "retry")).toBe(3);
    expect(await metric(server, "failed")).toBe(1);
    await delay(500);
    expect((await row(a.event_id, "sub_dead"))?.attempts).toBe(4);
  });

  it("shares the outbox between several workers without sending an event twice", async () => {
    await Promise.all([startServer(), startServer(), startServer()]);
    const alerts = Array.from({ length: 40 }, () => alertFor());
    await Promise.all(alerts.map((a) => enqueue(a)));
    for (const a of alerts) await expect.poll(() => receiver.successes(a.event_id), { timeout: 5000 }).toBe(1);
    await delay(300);
    for (const a of alerts) expect(receiver.received.filter((r) => r.eventId === a.event_id)).toHaveLength(1);
  });

  it("refuses malformed alerts and URLs in the caller's transaction", async () => {
    await expect(enqueue(alertFor({ at: "not a time" }))).rejects.toMatchObject({ code: "ALERT_INVALID" });
    await expect(enqueue(alertFor(), "sub_a", "ftp://example.com/x")).rejects.toMatchObject({ code: "ALERT_INVALID" });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM webhook_outbox");
    expect(rows[0]).toEqual({ n: 0 });
  });
});
