/**
 * Retention against real Postgres: exactly the old rows go, in bounded batches, one process at
 * a time; the worker in the app counts what it deleted; and an action whose verify decision
 * was pruned is still never spent twice.
 */
import { randomBytes } from "node:crypto";
import type { Pool } from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LOCK_IDS, WRIT_LOCK_NAMESPACE } from "../../src/store/locks.js";
import { createPool } from "../../src/store/pool.js";
import { pruneOnce } from "../../src/store/retention.js";
import { buildSignedAgreement } from "../../src/core/agreement/index.js";
import { mandatePeriods, type PeriodLimit } from "../../src/core/money/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { withTransaction } from "../../src/store/pool.js";
import { recordAllowedSpend } from "../../src/store/ledger/index.js";
import { principalKey, PRINCIPAL } from "../fixtures/records.js";
import { Registry } from "prom-client";
import { freePort } from "../../src/dev/free-port.js";
import { startRetention } from "../../src/retention/worker.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, { max: 4 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const POLICY = { decisionDays: 30, webhookDays: 7 };

async function decision(actionId: string, ageDays: number): Promise<void> {
  await pool.query(
    `INSERT INTO verify_decisions (agent_id, action_id, agreement_id, request_hash, decision, created_at)
     VALUES ('agent-r', $1, NULL, $2, '{"verdict":"DENY"}', now() - make_interval(days => $3::int))`,
    [actionId, `sha256:${"0".repeat(64)}`, ageDays],
  );
}

type OutboxState = "delivered" | "failed" | "due";
async function delivery(eventId: string, ageDays: number, state: OutboxState): Promise<void> {
  await pool.query(
    `INSERT INTO webhook_outbox (subscription_id, webhook_url, event_id, payload, created_at, next_attempt_at, delivered_at, failed_at)
     VALUES ('sub-r', 'http://127.0.0.1:9/hook', $1, '{}', now() - make_interval(days => $2::int),
             CASE WHEN $3 = 'due' THEN now() END, CASE WHEN $3 = 'delivered' THEN now() END, CASE WHEN $3 = 'failed' THEN now() END)`,
    [eventId, ageDays, state],
  );
}

const hash = () => randomBytes(32);

async function token(principal: string, expiresInHours: number): Promise<void> {
  await pool.query("INSERT INTO portal_sign_in_tokens (token_hash, principal_id, expires_at) VALUES ($1, $2, now() + make_interval(hours => $3::int))", [
    hash(),
    principal,
    expiresInHours,
  ]);
}

async function session(principal: string, expiresInHours: number, revokedHoursAgo: number | null): Promise<void> {
  await pool.query(
    `INSERT INTO portal_sessions (session_hash, principal_id, expires_at, revoked_at)
     VALUES ($1, $2, now() + make_interval(hours => $3::int), CASE WHEN $4::int IS NULL THEN NULL ELSE now() - make_interval(hours => $4::int) END)`,
    [hash(), principal, expiresInHours, revokedHoursAgo],
  );
}

/** An approval; ages in days before now (negative: in the future), null when not set. */
async function approval(id: string, status: "pending" | "approved" | "declined", a: { expires: number; decided?: number; used?: number }): Promise<void> {
  await pool.query(
    `INSERT INTO approvals (approval_id, agent_id, action_id, org_id, principal_id, agreement_id, request_hash, content, status, created_at, expires_at, decided_at, used_at)
     VALUES ($1, 'agent-r', $1, 'org-r', 'prn_r', 'agr-r', $2, '{}', $3, now() - make_interval(days => 90), now() - make_interval(days => $4::int),
             now() - make_interval(days => $5::int), now() - make_interval(days => $6::int))`,
    [id, `sha256:${"0".repeat(64)}`, status, a.expires, a.decided ?? null, a.used ?? null],
  );
}

async function count(table: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`);
  return Number(rows[0]?.n);
}

describe("pruneOnce", () => {
  beforeEach(async () => {
    await pool.query("TRUNCATE verify_decisions, webhook_outbox, portal_sessions, portal_sign_in_tokens, portal_principals, approvals");
  });

  it("deletes exactly the rows past their retention, in batches, and nothing on a second pass", async () => {
    for (let i = 0; i < 5; i++) await decision(`old-${i}`, 31);
    for (let i = 0; i < 3; i++) await decision(`new-${i}`, 29);
    for (let i = 0; i < 3; i++) await delivery(`delivered-old-${i}`, 8, "delivered");
    await delivery("failed-old", 8, "failed");
    await delivery("due-old-1", 40, "due");
    await delivery("due-old-2", 8, "due");
    await delivery("delivered-new", 6, "delivered");
    await pool.query("INSERT INTO portal_principals (principal_id, email) VALUES ('prn_r', 'r@example.com')");
    await token("prn_r", -48); // expired two days ago: goes
    await token("prn_r", -49);
    await token("prn_r", -1); // expired an hour ago: kept
    await token("prn_r", 1);
    await session("prn_r", -48, null); // expired two days ago: goes
    await session("prn_r", 240, 48); // signed out two days ago: goes
    await session("prn_r", 240, 1); // signed out an hour ago: kept
    await session("prn_r", 240, null);

    const r = await pruneOnce(pool, { ...POLICY, batchSize: 2 });
    expect(r).toEqual({
      busy: false,
      deleted: { verify_decisions: 5, webhook_outbox: 4, portal_sign_in_tokens: 2, portal_sessions: 2, approvals: 0, period_events: 0, period_spend: 0 },
    });
    const { rows } = await pool.query<{ action_id: string }>("SELECT action_id FROM verify_decisions ORDER BY action_id");
    expect(rows.map((x) => x.action_id)).toEqual(["new-0", "new-1", "new-2"]);
    const outbox = await pool.query<{ event_id: string }>("SELECT event_id FROM webhook_outbox ORDER BY event_id");
    expect(outbox.rows.map((x) => x.event_id)).toEqual(["delivered-new", "due-old-1", "due-old-2"]);
    expect(await count("portal_sign_in_tokens")).toBe(2);
    expect(await count("portal_sessions")).toBe(2);

    expect((await pruneOnce(pool, POLICY)).deleted).toEqual({
      verify_decisions: 0,
      webhook_outbox: 0,
      portal_sign_in_tokens: 0,
      portal_sessions: 0,
      approvals: 0,
      period_events: 0,
      period_spend: 0,
    });
  });

  it("deletes approvals used, decided or expired longer ago than the decision retention, never a pending one before it expired", async () => {
    // All created 90 days ago; the retention of decisions is 30 days.
    await approval("used-old", "approved", { expires: 89, decided: 40, used: 31 }); // goes
    await approval("used-new", "approved", { expires: 89, decided: 40, used: 29 }); // used recently: kept
    await approval("approved-old", "approved", { expires: 89, decided: 31 }); // approved, never used: goes
    await approval("approved-new", "approved", { expires: 89, decided: 29 });
    await approval("declined-old", "declined", { expires: -1, decided: 31 }); // goes
    await approval("declined-new", "declined", { expires: 89, decided: 29 });
    await approval("expired-old", "pending", { expires: 31 }); // goes
    await approval("expired-new", "pending", { expires: 29 }); // expired recently: kept
    await approval("pending", "pending", { expires: -1 }); // still open, 90 days old: kept

    const r = await pruneOnce(pool, { ...POLICY, batchSize: 2 });
    expect(r.deleted.approvals).toBe(4);
    expect(r.deleted.verify_decisions).toBe(0);
    const { rows } = await pool.query<{ approval_id: string }>("SELECT approval_id FROM approvals ORDER BY approval_id");
    expect(rows.map((x) => x.approval_id)).toEqual(["approved-new", "declined-new", "expired-new", "pending", "used-new"]);
    expect((await pruneOnce(pool, POLICY)).deleted.approvals).toBe(0);
  });

  it("deletes the period events no window can still need, never one a rolling or open calendar window holds or one of a total window", async () => {
    const DAY = 86_400_000;
    const agreement = async (id: string, limits: PeriodLimit[]) => {
      const m = {
        intent_id: "i1",
        principal: { ...PRINCIPAL },
        agent: { agent_id: "agent-r" },
        currency: "EUR",
        maximum_amount: 500,
        time_zone: "Europe/Berlin",
        period_limits: limits,
      };
      const a = await buildSignedAgreement({ agreement_id: id, mandates: [m], at: "2020-01-01T00:00:00Z" }, principalKey);
      await withTransaction(pool, (c) => upsertAgreement(c, a, { orgId: "org_test" }));
      const periods = mandatePeriods(m)!;
      return (actionId: string, atMs: number) =>
        recordAllowedSpend(pool, {
          agreementId: id,
          intentId: "i1",
          actionId,
          amountMinor: 10_000n,
          currency: "EUR",
          at: new Date(atMs).toISOString(),
          limits: { periods: [{ owner: "intent", currency: "EUR", amountMinor: 10_000n, periods }] },
        });
    };
    const now = Date.now();
    // Each spend is 100 EUR. A day and a rolling week: an event 14 days old is past both; one 6 days old is in the week.
    const weekly = await agreement("agr-ret-week", [
      { period: "day", amount: 100 },
      { rolling: "P7D", amount: 100 },
    ]);
    expect(await weekly("w-old", now - 14 * DAY)).toMatchObject({ recorded: true });
    expect(await weekly("w-new", now - 6 * DAY)).toMatchObject({ recorded: true });
    // A month: an event 40 days old counted in a month that closed; one from today is in an open month.
    const monthly = await agreement("agr-ret-month", [{ period: "month", amount: 100 }]);
    expect(await monthly("m-old", now - 40 * DAY)).toMatchObject({ recorded: true });
    expect(await monthly("m-new", now - 60_000)).toMatchObject({ recorded: true });
    // All time: kept for good, however old.
    const total = await agreement("agr-ret-total", [
      { period: "total", count: 5 },
      { period: "day", amount: 100 },
    ]);
    expect(await total("t-old", now - 400 * DAY)).toMatchObject({ recorded: true });

    const r = await pruneOnce(pool, { ...POLICY, batchSize: 1 });
    expect(r.deleted.period_events).toBe(2);
    const { rows } = await pool.query<{ action_id: string }>("SELECT action_id FROM period_events ORDER BY action_id");
    expect(rows.map((x) => x.action_id)).toEqual(["m-new", "t-old", "w-new"]);
    expect((await pruneOnce(pool, POLICY)).deleted.period_events).toBe(0);
    // What the windows still hold is unchanged: the rolling week holds w-new's 100 EUR, so 100 more is refused.
    const refused = await weekly("w-more", now);
    expect(refused).toMatchObject({ recorded: false, reason: "PERIOD_LIMIT_EXCEEDED" });
  });

  it("deletes the hour counters of rolling windows no rolling window can hold (older than 367 days), never a calendar counter", async () => {
    // As the spend transaction writes them (src/store/ledger/periods.ts): an hour 368 days ago
    // (goes), one 366 days ago (a P366D window may still hold it: stays), a calendar year as
    // old (stays).
    await pool.query(
      `INSERT INTO period_spend (agent_id, owner, currency, window_kind, window_start, spent_minor, payments)
       VALUES ('agent-h', '["intent","agent-h","agr-h","i1"]', 'EUR', 'bucket@PT1H', date_trunc('hour', now()) - interval '368 days', 100, 1),
              ('agent-h', '["intent","agent-h","agr-h","i1"]', 'EUR', 'bucket@PT1H', date_trunc('hour', now()) - interval '366 days', 100, 1),
              ('agent-h', '["intent","agent-h","agr-h","i1"]', 'EUR', 'year@Europe/Berlin', now() - interval '400 days', 200, 2)`,
    );
    const left = async () =>
      (
        await pool.query<{ window_kind: string; days: number }>(
          "SELECT window_kind, round(extract(epoch FROM now() - window_start) / 86400)::int AS days FROM period_spend WHERE agent_id = 'agent-h' ORDER BY 1, 2",
        )
      ).rows;
    const r = await pruneOnce(pool, { ...POLICY, batchSize: 1 });
    expect(r.deleted.period_spend).toBe(1);
    expect(await left()).toEqual([
      { window_kind: "bucket@PT1H", days: 366 },
      { window_kind: "year@Europe/Berlin", days: 400 },
    ]);
    expect((await pruneOnce(pool, POLICY)).deleted.period_spend).toBe(0);
  });

  it("deletes at most batchSize x maxBatches rows of a table per pass", async () => {
    for (let i = 0; i < 7; i++) await decision(`old-${i}`, 31);
    expect((await pruneOnce(pool, { ...POLICY, batchSize: 2, maxBatches: 2 })).deleted.verify_decisions).toBe(4);
    expect((await pruneOnce(pool, { ...POLICY, batchSize: 2, maxBatches: 2 })).deleted.verify_decisions).toBe(3);
    expect(await count("verify_decisions")).toBe(0);
  });

  it("stops, deleting nothing, while another process holds the retention lock", async () => {
    await decision("old-locked", 31);
    const other = await pool.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT pg_advisory_xact_lock($1::int, $2::int)", [WRIT_LOCK_NAMESPACE, LOCK_IDS.retention]);
      const r = await pruneOnce(pool, POLICY);
      expect(r.busy).toBe(true);
      expect(r.deleted.verify_decisions).toBe(0);
      await other.query("COMMIT");
    } finally {
      other.release();
    }
    expect((await pruneOnce(pool, POLICY)).deleted.verify_decisions).toBe(1);
  });
});

describe("startRetention", () => {
  it("counts a pass that fails (no Postgres) as an error and keeps its schedule; stop() ends it", async () => {
    const down = createPool(`postgres://writ:none@127.0.0.1:${await freePort()}/writ`, { max: 1 });
    const registry = new Registry();
    const warnings: string[] = [];
    const worker = startRetention(down, POLICY, { intervalMs: 3_600_000, registry, log: { warn: (_o, m) => warnings.push(m), info: () => undefined } });
    try {
      expect(await worker.runNow()).toBeUndefined();
      expect(await worker.runNow()).toBeUndefined();
      expect(await registry.getSingleMetricAsString("writ_retention_runs_total")).toContain('writ_retention_runs_total{result="error"} 2');
      expect(warnings).toEqual(["retention pass failed; the next one runs on schedule", "retention pass failed; the next one runs on schedule"]);
    } finally {
      await worker.stop();
      await down.end();
    }
    expect(await worker.runNow()).toBeUndefined(); // stopped: no pass runs
    expect(await registry.getSingleMetricAsString("writ_retention_runs_total")).toContain('writ_retention_runs_total{result="error"} 2');
  });
});

describe("the retention worker in the app", () => {
  let w: VerifyWorld;
  beforeAll(async () => {
    w = await startVerifyWorld({ WRIT_RETENTION_INTERVAL_MS: "3600000", WRIT_DECISION_RETENTION_DAYS: "1" });
  });
  afterAll(async () => {
    await w?.close();
  });

  it("counts what it deleted, and a retried action whose decision was pruned is not spent twice", async () => {
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(w.agentId, "i1", { cumulative_maximum: 1000 })] });
    const act = action();
    expect((await w.verify({ agent_id: w.agentId, action: act })).body.verdict).toBe("ALLOW");
    // The decision is two days old now: past WRIT_DECISION_RETENTION_DAYS=1.
    await w.db.pool.query("UPDATE verify_decisions SET created_at = now() - interval '2 days' WHERE action_id = $1", [act.action_id]);
    const worker = w.server.app.retention;
    expect(worker).not.toBeNull();
    const r = await worker?.runNow();
    expect(r?.deleted.verify_decisions).toBeGreaterThanOrEqual(1);
    const { rows } = await w.db.pool.query("SELECT 1 FROM verify_decisions WHERE action_id = $1", [act.action_id]);
    expect(rows).toHaveLength(0);
    const metrics = await (await fetch(`${w.server.url}/metrics`)).text();
    expect(metrics).toMatch(/writ_retention_deleted_total\{table="verify_decisions"\} [1-9]/);
    expect(metrics).toMatch(/writ_retention_runs_total\{result="ok"\} 1/);

    const again = await w.verify({ agent_id: w.agentId, action: act });
    expect(again.body.verdict).toBe("ALLOW");
    const ledger = await w.db.pool.query("SELECT count(*)::int AS n FROM ledger_entries WHERE agreement_id = $1 AND action_id = $2", [
      agreementId,
      act.action_id,
    ]);
    expect(ledger.rows[0]).toEqual({ n: 1 });
  });
});
