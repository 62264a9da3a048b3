/**
 * verify_decisions by time partitions on a real Citus cluster (hack/citus/cluster.ts: a
 * coordinator and two workers; src/store/citus-partitions.ts; docs/scale.md, "Retention by time
 * partitions"): with WRIT_CITUS_DECISION_PARTITIONS=week, the layout makes it a table partitioned by UTC week, distributed by agent_id
 * with the agent's other tables and its partitions with it; a retention pass creates the
 * partitions ahead and drops an old week's partition whole (its rows gone, newer ones kept).
 * One answer per action holds without the key (agent_id, action_id) (the trigger
 * writ_decision_once): a retry gets the answer stored first, in whichever week's partition it
 * is, and the races the key prevented on plain Postgres stay prevented: a DENY stored while an
 * ALLOW of the same action is stored but not committed, two ALLOWs of one action on different
 * agreements. Each race holds the first writer after it stored its answer and before it
 * committed (an uncommitted period event of its action, made by the test, holds its period
 * write, which runs after the answer's insert), then lets the second writer run.
 */
import type { Pool, PoolClient } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionCitus, startCitusCluster, type CitusCluster } from "../../hack/citus/cluster.js";
import { buildSignedAgreement } from "../../src/core/agreement/index.js";
import type { HashString } from "../../src/core/canonical/index.js";
import { mandatePeriods } from "../../src/core/money/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { recordAllowedSpend, type AllowedSpend } from "../../src/store/ledger/index.js";
import { ownerKey } from "../../src/store/ledger/periods.js";
import { migrate } from "../../src/store/migrate.js";
import { createPool, withTransaction } from "../../src/store/pool.js";
import { pruneOnce } from "../../src/store/retention.js";
import { saveRefusalDecisions } from "../../src/store/verify-decisions.js";
import { principalKey, PRINCIPAL } from "../fixtures/records.js";

// Skipped only when Citus is neither installed nor buildable here (as ./citus.test.ts).
const tools = provisionCitus();

const AGENT = "agent-race";
const HASH = `sha256:${"2".repeat(64)}` as HashString;

const mandate = {
  intent_id: "i1",
  principal: { ...PRINCIPAL },
  agent: { agent_id: AGENT },
  currency: "EUR",
  maximum_amount: 500,
  time_zone: "UTC",
  period_limits: [{ period: "day" as const, amount: 400 }],
};

function periodsOf(): NonNullable<ReturnType<typeof mandatePeriods>> {
  const p = mandatePeriods(mandate);
  if (!p) throw new Error("the mandate has limits per period");
  return p;
}
const PERIODS = periodsOf();

function allow(agreementId: string, actionId: string): AllowedSpend {
  return {
    agreementId,
    intentId: "i1",
    actionId,
    amountMinor: 100n,
    currency: "EUR",
    at: new Date().toISOString(),
    limits: { periods: [{ owner: "intent", currency: "EUR", amountMinor: 100n, periods: PERIODS }] },
    decision: { agentId: AGENT, requestHash: HASH, body: { verdict: "ALLOW", agreement_id: agreementId } },
  };
}

describe.skipIf(tools === null)("verify_decisions by week on a Citus cluster", () => {
  let cluster: CitusCluster;
  let pool: Pool;

  beforeAll(async () => {
    cluster = await startCitusCluster({ tools: tools ?? undefined, parameters: { "citus.shard_count": 4, fsync: "off" } });
    // The setting is off by default (docs/scale.md): this cluster is laid out with it on.
    process.env.WRIT_CITUS_DECISION_PARTITIONS = "week";
    try {
      await migrate(cluster.url());
    } finally {
      delete process.env.WRIT_CITUS_DECISION_PARTITIONS;
    }
    pool = createPool(cluster.url(), { max: 6 });
    for (const id of ["agr-race-a", "agr-race-b"]) {
      const a = await buildSignedAgreement({ agreement_id: id, mandates: [mandate], at: "2020-01-01T00:00:00Z" }, principalKey);
      await withTransaction(pool, (c) => upsertAgreement(c, a, { orgId: "org_test" }));
    }
  }, 240_000);
  afterAll(async () => {
    await pool?.end().catch(() => {});
    await cluster?.stop();
  }, 60_000);

  /** verify_decisions' partitions (Citus's time_partitions view), oldest first. */
  async function partitions(): Promise<{ name: string; from: Date; to: Date }[]> {
    const { rows } = await pool.query<{ name: string; f: Date; t: Date }>(
      `SELECT partition::text AS name, from_value::timestamptz AS f, to_value::timestamptz AS t FROM time_partitions
        WHERE parent_table = 'verify_decisions'::regclass ORDER BY from_value::timestamptz`,
    );
    return rows.map((r) => ({ name: r.name, from: r.f, to: r.t }));
  }

  /** Lock waits of `locktype` on every node. */
  async function waiting(locktype: string): Promise<number> {
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM citus_locks WHERE NOT granted AND locktype = $1", [locktype]);
    return rows[0]?.n ?? 0;
  }

  /** Resolves once `until()` holds or `p` settled (bounded: 15 s, then throws). */
  async function untilOr(until: () => Promise<boolean>, p: Promise<unknown>): Promise<void> {
    let settled = false;
    void p.then(
      () => (settled = true),
      () => (settled = true),
    );
    const end = Date.now() + 15_000;
    while (!settled && !(await until())) {
      if (Date.now() > end) throw new Error("timed out waiting for the race's second writer");
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Holds the period write of `actionId` on `agreementId` (an uncommitted period event with its key) until `release`. */
  async function holdPeriodWrite(agreementId: string, actionId: string): Promise<{ release: () => Promise<void> }> {
    const c: PoolClient = await pool.connect();
    await c.query("BEGIN");
    await c.query(
      `INSERT INTO period_events (agent_id, agreement_id, action_id, owner, currency, at, amount_minor, allowed_minor)
       VALUES ($1, $2, $3, $4, 'EUR', now(), 0, 0)`,
      [AGENT, agreementId, actionId, ownerKey(AGENT, agreementId, "i1", { owner: "intent" })],
    );
    return {
      release: async () => {
        await c.query("ROLLBACK");
        c.release();
      },
    };
  }

  async function answers(actionId: string): Promise<{ verdict: string; agreement_id: string | null }[]> {
    const { rows } = await pool.query<{ verdict: string; agreement_id: string | null }>(
      "SELECT decision->>'verdict' AS verdict, agreement_id FROM verify_decisions WHERE agent_id = $1 AND action_id = $2",
      [AGENT, actionId],
    );
    return rows;
  }

  it("is partitioned by week, distributed with the agent's tables, its partitions reaching a week ahead", async () => {
    const { rows } = await pool.query<{ kind: string }>("SELECT relkind::text AS kind FROM pg_class WHERE oid = 'verify_decisions'::regclass");
    expect(rows[0]?.kind).toBe("p");
    const parts = await partitions();
    const week = 7 * 86_400_000;
    expect(parts.length).toBeGreaterThanOrEqual(2);
    for (const p of parts) {
      expect(p.to.getTime() - p.from.getTime()).toBe(week);
      expect(p.from.getUTCDay()).toBe(1); // Monday, 00:00 UTC
      expect(p.from.getUTCHours()).toBe(0);
    }
    expect((parts.at(-1) as { to: Date }).to.getTime()).toBeGreaterThanOrEqual(Date.now() + week);
    const { rows: groups } = await pool.query<{ t: string; g: number }>(
      "SELECT logicalrelid::regclass::text AS t, colocationid AS g FROM pg_dist_partition WHERE logicalrelid::regclass::text = ANY($1::text[])",
      [["delegations", "verify_decisions", ...parts.map((p) => p.name)]],
    );
    expect(groups).toHaveLength(parts.length + 2);
    expect(new Set(groups.map((g) => g.g)).size).toBe(1);
  });

  it("drops an old week's partition whole in a pass (its rows gone, newer kept) and creates the partitions ahead again", async () => {
    // The weeks from 60 days ago, as the passes of those weeks would have made them.
    await withTransaction(pool, async (c) => {
      await c.query("SET LOCAL TimeZone = 'UTC'");
      await c.query("SELECT create_time_partitions('verify_decisions', interval '7 days', now(), now() - interval '60 days')");
    });
    await pool.query(
      `INSERT INTO verify_decisions (agent_id, action_id, request_hash, decision, created_at)
       VALUES ('agent-c1', 'old-1', $1, '{"verdict":"DENY"}', now() - interval '50 days'),
              ('agent-c2', 'old-2', $1, '{"verdict":"DENY"}', now() - interval '45 days'),
              ('agent-c2', 'kept', $1, '{"verdict":"DENY"}', now() - interval '29 days'),
              ('agent-c1', 'new', $1, '{"verdict":"DENY"}', now())`,
      [HASH],
    );
    const before = await partitions();
    const cutoff = Date.now() - 30 * 86_400_000;
    const old = before.filter((p) => p.to.getTime() <= cutoff);
    expect(old.length).toBeGreaterThanOrEqual(3);
    // The newest partition dropped: the pass makes it again.
    const newest = before.at(-1) as { name: string };
    await pool.query(`DROP TABLE ${newest.name}`);

    const r = await pruneOnce(pool, { decisionDays: 30, webhookDays: 7, batchSize: 1 });
    expect(r).toMatchObject({ busy: false, deleted: { verify_decisions: 2 } });
    const after = await partitions();
    expect(after.map((p) => p.name)).toEqual(before.filter((p) => !old.includes(p)).map((p) => p.name));
    const left = await pool.query<{ action_id: string }>(
      "SELECT action_id FROM verify_decisions WHERE agent_id IN ('agent-c1', 'agent-c2') ORDER BY action_id",
    );
    expect(left.rows.map((x) => x.action_id)).toEqual(["kept", "new"]);
    expect((await pruneOnce(pool, { decisionDays: 30, webhookDays: 7 })).deleted.verify_decisions).toBe(0);
  });

  it("answers a retry with the answer stored first, in an earlier week's partition too", async () => {
    const deny = { agentId: AGENT, actionId: "retry-1", agreementId: "agr-race-a", requestHash: HASH, decision: { verdict: "DENY", reasons: ["X"] } };
    expect(await saveRefusalDecisions(pool, [deny])).toEqual([{ stored: true }]);
    expect(await saveRefusalDecisions(pool, [deny])).toEqual([{ stored: false, decision: expect.objectContaining({ actionId: "retry-1" }) }]);
    expect(await recordAllowedSpend(pool, allow("agr-race-a", "retry-1"))).toMatchObject({ recorded: false, reason: "ACTION_DECIDED" });
    // An answer of 10 days ago (last week's partition, or the one before): a retry finds it.
    await pool.query(
      `INSERT INTO verify_decisions (agent_id, action_id, agreement_id, request_hash, decision, created_at)
       VALUES ($1, 'retry-2', 'agr-race-a', $2, '{"verdict":"DENY","reasons":["Y"]}', now() - interval '10 days')`,
      [AGENT, HASH],
    );
    expect(await saveRefusalDecisions(pool, [{ ...deny, actionId: "retry-2" }])).toEqual([
      { stored: false, decision: expect.objectContaining({ decision: { verdict: "DENY", reasons: ["Y"] } }) },
    ]);
    expect(await recordAllowedSpend(pool, allow("agr-race-b", "retry-2"))).toMatchObject({ recorded: false, reason: "ACTION_DECIDED" });
    expect(await answers("retry-1")).toHaveLength(1);
    expect(await answers("retry-2")).toHaveLength(1);
    // An ALLOW's retry gets its stored answer (the same request: replayed).
    expect(await recordAllowedSpend(pool, allow("agr-race-a", "retry-3"))).toMatchObject({ recorded: true, decisionStored: true });
    expect(await recordAllowedSpend(pool, allow("agr-race-a", "retry-3"))).toMatchObject({ recorded: true, replayed: true });
    expect(await answers("retry-3")).toEqual([{ verdict: "ALLOW", agreement_id: "agr-race-a" }]);
  });

  it("stores one answer when a DENY is saved while an ALLOW of the same action is stored but not committed", async () => {
    const act = "race-deny-allow";
    const hold = await holdPeriodWrite("agr-race-a", act);
    const allowed = recordAllowedSpend(pool, allow("agr-race-a", act));
    await untilOr(async () => (await waiting("transactionid")) > 0, allowed);
    const denied = saveRefusalDecisions(pool, [
      { agentId: AGENT, actionId: act, agreementId: "agr-race-a", requestHash: HASH, decision: { verdict: "DENY", reasons: ["X"] } },
    ]);
    await untilOr(async () => (await waiting("advisory")) > 0, denied);
    await hold.release();
    const [a, d] = await Promise.all([allowed, denied]);
    expect(a).toMatchObject({ recorded: true, replayed: false, decisionStored: true });
    expect(d).toEqual([{ stored: false, decision: expect.objectContaining({ decision: expect.objectContaining({ verdict: "ALLOW" }) }) }]);
    expect(await answers(act)).toEqual([{ verdict: "ALLOW", agreement_id: "agr-race-a" }]);
  });

  it("stores one answer when two ALLOWs of one action choose different agreements", async () => {
    const act = "race-allow-allow";
    const hold = await holdPeriodWrite("agr-race-a", act);
    const first = recordAllowedSpend(pool, allow("agr-race-a", act));
    await untilOr(async () => (await waiting("transactionid")) > 0, first);
    const second = recordAllowedSpend(pool, allow("agr-race-b", act));
    await untilOr(async () => (await waiting("advisory")) > 0, second);
    await hold.release();
    const [x, y] = await Promise.all([first, second]);
    expect(x).toMatchObject({ recorded: true, decisionStored: true });
    // The second spend is recorded (its agreement's ledger) but its answer is not: the caller
    // finds the first answer and releases this spend (src/verify/commit/decision-log.ts).
    expect(y).toMatchObject({ recorded: true, decisionStored: false });
    expect(await answers(act)).toEqual([{ verdict: "ALLOW", agreement_id: "agr-race-a" }]);
  });

  it("stores one answer for DENYs of one action saved at once", async () => {
    const d = { agentId: AGENT, actionId: "race-deny-deny", agreementId: null, requestHash: HASH, decision: { verdict: "DENY", reasons: ["X"] } };
    const results = await Promise.all([saveRefusalDecisions(pool, [d]), saveRefusalDecisions(pool, [d]), saveRefusalDecisions(pool, [d])]);
    expect(results.flat().filter((r) => r.stored)).toHaveLength(1);
    expect(await answers("race-deny-deny")).toHaveLength(1);
  });
});
