/**
 * Reports: 201/400/404/409/429, the daily cap (race-free, per UTC day), score changes, the
 * incident log entry, and alerts: one fan-out written in the report's transaction, expanded
 * into the webhooks outbox after it commits (or by the delivery worker, when the writer died
 * first), and delivered, signed, to a real local receiver by the real delivery worker.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashOf } from "../../src/core/canonical/index.js";
import { signerFromSeed } from "../../src/core/jose/index.js";
import { verifyAlert, type AlertPayload } from "../../src/webhooks/index.js";
import { enqueueFanout } from "../../src/store/alert-fanout.js";
import { withTransaction } from "../../src/store/pool.js";
import { newEventId } from "../../src/store/subscriptions.js";
import { startTestServer } from "../helpers/server.js";
import { randomHash, startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

const CAP = 5;
let now = new Date("2026-03-01T10:00:00.000Z");
let w: RegistryWorld;
let opToken = "";
let walletToken = "";
let bankToken = "";
let receiver: Server;
let hookUrl = "";
const received: unknown[] = [];

function report(token: string, body: Record<string, unknown>) {
  return w.call("POST", "/v1/reports", token, { kind: "transaction_outcome", evidence_hash: randomHash(), summary: "s", ...body });
}

async function scoreOf(agentId: string): Promise<number> {
  return (await w.call("GET", `/v1/agents/${agentId}`, walletToken)).body.score as number;
}

async function outbox(agentId: string): Promise<{ subscription_id: string; event_id: string; payload: AlertPayload }[]> {
  const { rows } = await w.db.pool.query("SELECT subscription_id, event_id, payload FROM webhook_outbox WHERE payload->>'agent_id' = $1 ORDER BY id", [
    agentId,
  ]);
  return rows;
}

async function waitFor<T>(fn: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let data = "";
    req.on("data", (c) => (data += c));
    req.on("end", () => {
      received.push(JSON.parse(data));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  w = await startRegistryWorld({ BUR_REPORT_DAILY_CAP: String(CAP), BUR_WEBHOOK_WORKER: "1", BUR_WEBHOOK_POLL_MS: "20" }, { clock: () => now });
  opToken = (await w.issueKey(await w.createOrg("agent_operator"))).token;
  walletToken = (await w.issueKey(await w.createOrg("wallet"))).token;
  bankToken = (await w.issueKey(await w.createOrg("bank_issuer"))).token;
});

afterAll(async () => {
  await w?.close();
  await new Promise((r) => receiver?.close(r));
});

describe("POST /v1/reports", () => {
  it("files a report: 201 {report_id, kind}", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    const r = await report(walletToken, { agent_id, kind: "chargeback" });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ report_id: expect.stringMatching(/^rpt_[0-9a-f]{24}$/), kind: "chargeback" });
  });

  it("answers 400 for a bad kind, evidence hash or summary, and 404 for an unknown agent", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    expect(await report(walletToken, { agent_id, kind: "refund" })).toMatchObject({
      status: 400,
      body: { error: "kind must be one of: transaction_outcome, fraud_incident, chargeback, policy_violation" },
    });
    // A number is not text (bodies are validated as sent, never coerced).
    expect(await report(walletToken, { agent_id, evidence_hash: 42 })).toMatchObject({ status: 400, body: { error: "evidence_hash must be a string" } });
    for (const evidence_hash of ["sha256:ABC", `sha256:${"A".repeat(64)}`, "f".repeat(64)]) {
      expect(await report(walletToken, { agent_id, evidence_hash })).toMatchObject({
        status: 400,
        body: { error: "evidence_hash must match ^sha256:[0-9a-f]{64}$" },
      });
    }
    expect(await report(walletToken, { agent_id, summary: "x".repeat(2001) })).toMatchObject({
      status: 400,
      body: { error: "summary must be at most 2000 characters" },
    });
    expect(await w.call("POST", "/v1/reports", walletToken, { agent_id, kind: "chargeback", evidence_hash: randomHash() })).toMatchObject({
      status: 400,
      body: { error: "summary is required" },
    });
    expect(await report(walletToken, { agent_id, summary: "nul \u0000 byte" })).toMatchObject({
      status: 400,
      body: { error: "summary must not contain U+0000" },
    });
    expect(await report(walletToken, { agent_id: "nobody" })).toMatchObject({ status: 404, body: { error: "agent was not found" } });
  });

  it("answers 409 for the same reporter, agent, kind and hash; other combinations are new reports", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    const evidence_hash = randomHash();
    expect((await report(walletToken, { agent_id, kind: "chargeback", evidence_hash })).status).toBe(201);
    expect(await report(walletToken, { agent_id, kind: "chargeback", evidence_hash })).toMatchObject({
      status: 409,
      body: { error: "report duplicates one already filed" },
    });
    expect((await report(walletToken, { agent_id, kind: "policy_violation", evidence_hash })).status).toBe(201);
    expect((await report(bankToken, { agent_id, kind: "chargeback", evidence_hash })).status).toBe(201);
    const other = await w.registerAgent(opToken);
    expect((await report(walletToken, { agent_id: other.agent_id, kind: "chargeback", evidence_hash })).status).toBe(201);
  });
});

describe("the daily report cap", () => {
  it("answers 429 past the cap, counts only accepted reports, and starts again the next UTC day", async () => {
    const org = await w.createOrg("merchant");
    const token = (await w.issueKey(org)).token;
    const { agent_id } = await w.registerAgent(opToken);
    now = new Date("2026-03-02T23:59:00.000Z");
    const first = randomHash();
    expect((await report(token, { agent_id, evidence_hash: first })).status).toBe(201);
    expect((await report(token, { agent_id, evidence_hash: first })).status).toBe(409);
    for (let i = 1; i < CAP; i++) expect((await report(token, { agent_id })).status).toBe(201);
    const over = await report(token, { agent_id });
    expect(over).toMatchObject({ status: 429, body: { error: "organization reached its daily report cap" } });
    expect((await report(token, { agent_id })).status).toBe(429);
    // Another organization is not affected.
    expect((await report(bankToken, { agent_id })).status).toBe(201);
    now = new Date("2026-03-03T00:00:00.000Z");
    expect((await report(token, { agent_id })).status).toBe(201);
    const { rows } = await w.db.pool.query(
      "SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n FROM reports WHERE org_id = $1 GROUP BY 1 ORDER BY 1",
      [org],
    );
    expect(rows).toEqual([
      { day: "2026-03-02", n: CAP },
      { day: "2026-03-03", n: 1 },
    ]);
  });

  it("holds under concurrent reports: exactly the cap is accepted", async () => {
    now = new Date("2026-03-04T12:00:00.000Z");
    const org = await w.createOrg("processor_psp");
    const token = (await w.issueKey(org)).token;
    const agents = await Promise.all([1, 2, 3].map(() => w.registerAgent(opToken)));
    const answers = await Promise.all(Array.from({ length: 3 * CAP }, (_, i) => report(token, { agent_id: agents[i % 3]?.agent_id })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(CAP);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * CAP);
    const { rows } = await w.db.pool.query("SELECT count(*)::int AS n FROM reports WHERE org_id = $1", [org]);
    expect(rows[0].n).toBe(CAP);
    const counter = await w.db.pool.query("SELECT count FROM report_daily_counts WHERE org_id = $1", [org]);
    expect(counter.rows).toEqual([{ count: CAP }]);
  });
});

describe("score changes, incidents and alerts", () => {
  it("moves the score by each organization's most severe adverse report, once, and its outcomes once", async () => {
    now = new Date("2026-03-05T12:00:00.000Z");
    const { agent_id } = await w.registerAgent(opToken);
    expect(await scoreOf(agent_id)).toBe(600);
    await report(walletToken, { agent_id, kind: "transaction_outcome" });
    expect(await scoreOf(agent_id)).toBe(605);
    await report(walletToken, { agent_id, kind: "transaction_outcome" });
    expect(await scoreOf(agent_id)).toBe(605); // the same organization vouches once
    await report(walletToken, { agent_id, kind: "chargeback" });
    expect(await scoreOf(agent_id)).toBe(545);
    await report(walletToken, { agent_id, kind: "policy_violation" });
    expect(await scoreOf(agent_id)).toBe(505); // its worst report now counts instead: -100, not -160
    await report(bankToken, { agent_id, kind: "chargeback" });
    expect(await scoreOf(agent_id)).toBe(445); // another organization counts on its own
  });

  it("one organization cannot take an agent from 600 to 0: three fraud incidents count once; it takes three organizations", async () => {
    now = new Date("2026-03-05T13:00:00.000Z");
    const { agent_id } = await w.registerAgent(opToken);
    const orgs = [];
    for (let i = 0; i < 3; i++) orgs.push((await w.issueKey(await w.createOrg("processor_psp"))).token);
    const [a, b, c] = orgs as [string, string, string];
    for (let i = 0; i < 3; i++) expect((await report(a, { agent_id, kind: "fraud_incident" })).status).toBe(201);
    expect(await scoreOf(agent_id)).toBe(350);
    await report(a, { agent_id, kind: "chargeback" });
    await report(a, { agent_id, kind: "policy_violation" });
    expect(await scoreOf(agent_id)).toBe(350); // at most -250 from one organization, whatever it files
    const inquiry = await w.call("POST", "/v1/inquiries", walletToken, { agent_id, purpose_code: "fraud_investigation" });
    expect(inquiry.body).toMatchObject({
      incidents: 1,
      trust_score: {
        score: 350,
        reasons: [
          { code: "VERIFICATION_LEVEL", points: 600 },
          { code: "FRAUD_INCIDENT", points: -250 },
        ],
      },
    });
    await report(b, { agent_id, kind: "fraud_incident" });
    expect(await scoreOf(agent_id)).toBe(100);
    await report(c, { agent_id, kind: "fraud_incident" });
    expect(await scoreOf(agent_id)).toBe(0);
  });

  it("enqueues one score_drop event per active subscription in the report's transaction, and delivers it signed", async () => {
    now = new Date("2026-03-06T12:00:00.000Z");
    const { agent_id } = await w.registerAgent(opToken);
    const s1 = await w.call("POST", "/v1/subscriptions", walletToken, { agent_id, webhook_url: hookUrl });
    const s2 = await w.call("POST", "/v1/subscriptions", bankToken, { agent_id, webhook_url: `${hookUrl}?bank=1` });
    const ended = await w.call("POST", "/v1/subscriptions", bankToken, { agent_id, webhook_url: `${hookUrl}?ended=1` });
    expect((await w.call("DELETE", `/v1/subscriptions/${ended.body.subscription_id as string}`, bankToken)).status).toBe(200);

    // A small rise or fall does not alert.
    await report(walletToken, { agent_id, kind: "transaction_outcome" });
    expect(await outbox(agent_id)).toEqual([]);

    const r = await report(bankToken, { agent_id, kind: "chargeback" });
    expect(r.status).toBe(201);
    const rows = await outbox(agent_id);
    expect(rows.map((x) => x.subscription_id).sort()).toEqual([s1.body.subscription_id, s2.body.subscription_id].sort());
    expect(new Set(rows.map((x) => x.event_id)).size).toBe(1);
    expect(rows[0]?.event_id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(rows[0]?.payload).toMatchObject({
      type: "score_drop",
      agent_id,
      at: now.toISOString(),
      details: { report_id: r.body.report_id, kind: "chargeback", previous_score: 605, score: 545 },
    });
    expect(JSON.stringify(rows)).not.toContain("evidence");

    const logKey = signerFromSeed(w.seed).publicJwk;
    const delivered = await waitFor(() => {
      const mine = received.filter((b) => (b as { agent_id?: string }).agent_id === agent_id);
      return mine.length >= 2 ? mine : undefined;
    });
    for (const body of delivered) {
      const alert = await verifyAlert(body, logKey);
      expect(alert).toMatchObject({ type: "score_drop", agent_id, event_id: rows[0]?.event_id });
    }
  });

  it("writes one fan-out row in the report's transaction and none is left after the answer", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    await w.call("POST", "/v1/subscriptions", walletToken, { agent_id, webhook_url: `${hookUrl}?fanout=1` });
    await w.call("POST", "/v1/subscriptions", bankToken, { agent_id, webhook_url: `${hookUrl}?fanout=2` });
    expect((await report(bankToken, { agent_id, kind: "fraud_incident" })).status).toBe(201);
    expect(await outbox(agent_id)).toHaveLength(2);
    expect((await w.db.pool.query("SELECT count(*)::int AS n FROM alert_fanout WHERE agent_id = $1", [agent_id])).rows[0]).toEqual({ n: 0 });
  });

  it("delivers a fan-out its writer never expanded (a crash after commit): the delivery worker expands it", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    await w.call("POST", "/v1/subscriptions", walletToken, { agent_id, webhook_url: `${hookUrl}?recovered=1` });
    const event_id = newEventId();
    // What a report's transaction commits: the fan-out row only (the writer then died).
    await withTransaction(w.db.pool, (c) =>
      enqueueFanout(c, agent_id, { event_id, type: "incident", agent_id, at: now.toISOString(), details: { kind: "fraud_incident" } }),
    );
    const delivered = await waitFor(() => received.find((b) => (b as { event_id?: string }).event_id === event_id));
    expect(await verifyAlert(delivered, signerFromSeed(w.seed).publicJwk)).toMatchObject({ event_id, type: "incident", agent_id });
    expect((await w.db.pool.query("SELECT count(*)::int AS n FROM alert_fanout WHERE agent_id = $1", [agent_id])).rows[0]).toEqual({ n: 0 });
  });

  it("logs a fraud incident (kind incident, evidence committed, not disclosed) and raises an incident alert", async () => {
    now = new Date("2026-03-07T12:00:00.000Z");
    const { agent_id } = await w.registerAgent(opToken);
    const sub = await w.call("POST", "/v1/subscriptions", walletToken, { agent_id, webhook_url: hookUrl });
    const evidence_hash = randomHash();
    const r = await report(bankToken, { agent_id, kind: "fraud_incident", evidence_hash, summary: "card testing" });
    expect(r.status).toBe(201);

    const head = await w.call("GET", "/v1/log/head");
    const last = await w.call("GET", `/v1/log/entries/${head.body.tree_size as number}`);
    expect(last.body.entry).toMatchObject({
      kind: "incident",
      body: {
        report_id: r.body.report_id,
        agent_id,
        kind: "fraud_incident",
        at: now.toISOString(),
        evidence_commitment: hashOf({ evidence_hash, report_id: r.body.report_id }),
      },
    });
    expect(JSON.stringify(last.body)).not.toContain(evidence_hash.slice(7));
    expect(JSON.stringify(last.body)).not.toContain("card testing");

    const rows = await outbox(agent_id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      subscription_id: sub.body.subscription_id,
      payload: { type: "incident", details: { kind: "fraud_incident", previous_score: 600, score: 350 } },
    });

    // A duplicate incident writes nothing: no log entry, no alert.
    expect((await report(bankToken, { agent_id, kind: "fraud_incident", evidence_hash })).status).toBe(409);
    expect((await w.call("GET", "/v1/log/head")).body.tree_size).toBe(head.body.tree_size);
    expect(await outbox(agent_id)).toHaveLength(1);
  });

  it("answers 503 for a fraud incident without the log key, and files nothing", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    const server = await startTestServer({ BUR_WEBHOOK_WORKER: "0" }, { pool: w.db.pool });
    try {
      const r = await fetch(`${server.url}/v1/reports`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${bankToken}` },
        body: JSON.stringify({ agent_id, kind: "fraud_incident", evidence_hash: randomHash(), summary: "x" }),
      });
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ error: "SVC_LOG_SIGNING_SEED is not set" });
      const { rows } = await w.db.pool.query("SELECT count(*)::int AS n FROM reports WHERE agent_id = $1", [agent_id]);
      expect(rows[0].n).toBe(0);
    } finally {
      await server.close();
    }
  });
});
