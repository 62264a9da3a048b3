/**
 * The spend transaction's read (src/store/sql/functions/writ_spend_read.sql) of a spend under a
 * delegation budget reads that delegation's agreements only: its cost does not grow with the
 * number of other delegated agreements. Its plans are taken from auto_explain (nested
 * statements, sent to this session as notices). And it takes its locks in one order, whatever
 * the order of the batch's spends: delegation rows by (depth, id), then agreement rows by
 * (agent, id).
 */
import pg, { type Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, type Mandate } from "../../src/core/agreement/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { recordAllowedSpend } from "../../src/store/ledger/index.js";
import { createPool, withTransaction } from "../../src/store/pool.js";
import { delegation as fixtureDelegation, iso, principalKey, PRINCIPAL, T0 } from "../fixtures/records.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  // One connection: the auto_explain settings below are that session's.
  pool = createPool(db.url, { max: 1 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const AGENT = "agent-plan";
const DELEGATED = 40;

describe("the spend read under a delegation budget", () => {
  it("probes the spend's own delegation, never every delegated agreement, when the delegation has no sub-delegations", async () => {
    const mandate: Mandate = {
      intent_id: "i1",
      principal: { ...PRINCIPAL },
      agent: { agent_id: AGENT },
      currency: "USD",
      maximum_amount: 1000,
      cumulative_maximum: 100_000,
      expires_at: iso(T0 + 86_400_000),
    };
    for (let k = 0; k < DELEGATED; k++) {
      const d = fixtureDelegation(undefined, {
        delegation_id: `del-${k}`,
        agent: { agent_id: AGENT },
        delegation_chain: [],
        scope: { currency: "USD", maximum_amount: 1000, cumulative_maximum: 100_000 },
      });
      const a = await buildSignedAgreement({ agreement_id: `agr-${k}`, mandates: [mandate], at: iso(T0) }, principalKey);
      await withTransaction(pool, async (c) => {
        await upsertDelegation(c, d);
        await upsertAgreement(c, a, { delegationId: `del-${k}`, orgId: "org_test" });
      });
    }
    const c = await pool.connect();
    const notices: string[] = [];
    const onNotice = (n: { message?: string }) => notices.push(n.message ?? "");
    c.on("notice", onNotice);
    try {
      await c.query("LOAD 'auto_explain'");
      await c.query(
        "SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on; SET auto_explain.log_level = notice",
      );
      await c.query("SET track_functions = 'all'");
    } finally {
      c.release();
    }
    const read: string[] = [];
    for (const [i, actionId] of ["first", "second"].entries()) {
      notices.length = 0;
      const r = await recordAllowedSpend(pool, {
        agreementId: "agr-7",
        intentId: "i1",
        actionId,
        amountMinor: 100n + BigInt(i),
        currency: "USD",
        at: iso(T0 + 1000),
        revision: 1,
        limits: { sliceMinor: 10_000_000n, delegation: { delegationId: "del-7", cumulativeMinor: 10_000_000n, currency: "USD" } },
      });
      expect(r).toMatchObject({ recorded: true, delegationSpentMinor: [100n, 201n][i] });
      // The read's statements, nested ones (logged first) included.
      const end = notices.findIndex((n) => n.includes("SELECT * FROM writ_spend_read("));
      expect(end).toBeGreaterThan(0);
      read.push(...notices.slice(0, end + 1));
    }
    // Every node of the read's plan handles a row or two, not the DELEGATED agreements.
    const rows = read.flatMap((n) => [...n.matchAll(/actual time=[\d.]+\.\.[\d.]+ rows=([\d.]+)/g)].map((m) => Number(m[1])));
    expect(rows.length).toBeGreaterThan(5);
    expect(Math.max(...rows)).toBeLessThan(DELEGATED / 4);
    const done = await pool.connect();
    try {
      done.off("notice", onNotice);
      await done.query("SET auto_explain.log_min_duration = -1");
      // The subtree's spend (writ_subtree_spend) is not computed for a delegation without sub-delegations.
      await done.query("SELECT pg_stat_force_next_flush()");
      const { rows: calls } = await done.query<{ n: string }>(
        "SELECT coalesce(sum(calls), 0)::text AS n FROM pg_stat_user_functions WHERE funcname = 'writ_subtree_spend'",
      );
      expect(calls[0]?.n).toBe("0");
    } finally {
      done.release();
    }
  });
});

describe("the spend read's locks", () => {
  it("locks the delegation rows by id and the agreement rows by agent, then id, whatever the order of the batch's spends", async () => {
    // Two agents, each with an agreement bound to a delegation of its own; the batch lists the
    // second agent's spend first.
    const parts = ["agent-lock-a", "agent-lock-b"].map((agent) => ({ agent, delegationId: `del-${agent}`, agreementId: `agr-${agent}` }));
    for (const p of parts) {
      const mandate: Mandate = {
        intent_id: "i1",
        principal: { ...PRINCIPAL },
        agent: { agent_id: p.agent },
        currency: "USD",
        maximum_amount: 1000,
        expires_at: iso(T0 + 86_400_000),
      };
      const d = fixtureDelegation(undefined, {
        delegation_id: p.delegationId,
        agent: { agent_id: p.agent },
        delegation_chain: [],
        scope: { currency: "USD", maximum_amount: 1000 },
      });
      const a = await buildSignedAgreement({ agreement_id: p.agreementId, mandates: [mandate], at: iso(T0) }, principalKey);
      await withTransaction(pool, async (c) => {
        await upsertDelegation(c, d);
        await upsertAgreement(c, a, { delegationId: p.delegationId, orgId: "org_test" });
      });
    }
    const [first, second] = parts as [(typeof parts)[number], (typeof parts)[number]];
    const spends = [second, first].map((p, i) => ({
      i,
      ag: p.agent,
      did: p.delegationId,
      agreement_id: p.agreementId,
      intent_id: "i1",
      action_id: `act-lock-${i}`,
      currency: "USD",
      agent_id: p.agent,
      parent: false,
      del: true,
      rev: null,
    }));
    const args = [[second.delegationId, first.delegationId], [second.agreementId, first.agreementId], JSON.stringify(spends)];
    const lock = (table: "delegations" | "agreements", p: (typeof parts)[number], nowait = "") =>
      `SELECT 1 FROM ${table} WHERE agent_id = '${p.agent}' AND ${table === "delegations" ? `delegation_id = '${p.delegationId}'` : `agreement_id = '${p.agreementId}'`} FOR NO KEY UPDATE ${nowait}`;
    for (const table of ["delegations", "agreements"] as const) {
      const [blocker, batch, probe] = [new pg.Client(db.url), new pg.Client(db.url), new pg.Client(db.url)];
      await Promise.all([blocker, batch, probe].map((c) => c.connect()));
      try {
        await blocker.query("BEGIN");
        await blocker.query(lock(table, first));
        await batch.query("BEGIN");
        const read = batch.query("SELECT * FROM writ_spend_read($1::text[], $2::text[], $3::jsonb)", args);
        // The batch waits for the first row of the table in the lock order...
        await expect
          .poll(async () => (await probe.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted")).rows[0]?.n, {
            timeout: 10_000,
            interval: 20,
          })
          .toBeGreaterThan(0);
        // ...holding nothing of the second's in that table yet: in the batch's order it would.
        await probe.query("BEGIN");
        await expect(
          probe.query(lock(table, second, "NOWAIT")).then((r) => r.rowCount),
          table,
        ).resolves.toBe(1);
        await probe.query("ROLLBACK");
        await blocker.query("ROLLBACK");
        expect((await read).rows.map((r: { agreement_agent: string }) => r.agreement_agent).sort()).toEqual([first.agent, second.agent]);
        await batch.query("ROLLBACK");
      } finally {
        await Promise.all([blocker, batch, probe].map((c) => c.end()));
      }
    }
  });
});
