/**
 * Every statement of the spend transaction names the agent (docs/scale.md, "Keys"): each read
 * or lock of a per-agent table (delegations, agreements, agreement_ledger_heads,
 * ledger_entries, agreement_spend, verify_decisions) is an index probe that holds
 * `agent_id` (the first column of the table's key) in its condition, so that on a Citus cluster it is routed to
 * the one worker holding that agent's shard. A sub-agent's chain is read the same way: the
 * parent (another agent) is locked and read by the agent its child's row stored. The one read
 * by another column is the subtree of an ancestor with descendants (writ_subtree_spend: the
 * delegations whose chain names it, which may belong to any agent; docs/scale.md, "A
 * delegation chain across agents"). Plans are taken from auto_explain (nested statements, sent
 * to this session as notices), as in ./spend-read-plan.test.ts. The hold and period tables
 * (ledger_open_holds, period_events, period_spend) are keyed the same way, and so are the
 * statements of a spend with limits per period, a hold step that releases it (the one release,
 * `releaseSpend`) and the expiry sweep's steps.
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, type Mandate } from "../../src/core/agreement/index.js";
import { parentLink } from "../../src/core/delegation/index.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { preparePeriods } from "../../src/core/money/index.js";
import { expireHolds, heldTotals, recordAllowedSpend, recordHoldStep, recordOutcome, type SpendPeriods } from "../../src/store/ledger/index.js";
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

const PER_AGENT = ["delegations", "agreements", "agreement_ledger_heads", "ledger_entries", "agreement_spend", "verify_decisions"];

/** The hold and period tables, keyed by agent_id first too. */
const HOLDS_AND_PERIODS = ["ledger_open_holds", "period_events", "period_spend"];

/** Each scan of a per-agent table (of `tables`) in `plans`, with the condition it scans by. */
function scans(plans: readonly string[], tables: readonly string[] = PER_AGENT): { table: string; index: string; cond: string }[] {
  const out: { table: string; index: string; cond: string }[] = [];
  for (const plan of plans) {
    const lines = plan.split("\n");
    lines.forEach((line, i) => {
      const m = /(Seq Scan|Index Scan|Index Only Scan|Bitmap Heap Scan)(?: using (\w+))? on (\w+)/.exec(line);
      if (!m || !tables.includes(m[3] as string)) return;
      let index = m[2] ?? "";
      // The node's own lines: up to its first child ("->").
      const own: string[] = [];
      for (const l of lines.slice(i + 1)) {
        if (l.includes("->")) break;
        own.push(l);
      }
      // A bitmap heap scan's index is the Bitmap Index Scan below it.
      if (m[1] === "Bitmap Heap Scan") index = /Bitmap Index Scan on (\w+)/.exec(lines.slice(i + 1, i + 6).join("\n"))?.[1] ?? "";
      const cond = own
        .map((l) => /(?:Index Cond|Recheck Cond|Filter): (.*)/.exec(l)?.[1])
        .filter((x) => x !== undefined)
        .join(" AND ");
      out.push({ table: m[3] as string, index, cond: m[1] === "Seq Scan" ? "SEQ SCAN" : cond });
    });
  }
  return out;
}

describe("the spend transaction's statements", () => {
  it("probe every per-agent table by agent_id, for a sub-agent's spend under another agent's delegation and for an outcome", async () => {
    const mandate = (agentId: string): Mandate => ({
      intent_id: "i1",
      principal: { ...PRINCIPAL },
      agent: { agent_id: agentId },
      currency: "USD",
      maximum_amount: 1000,
      cumulative_maximum: 100_000,
      expires_at: iso(T0 + 86_400_000),
    });
    const parent = fixtureDelegation(undefined, {
      delegation_id: "del-parent",
      agent: { agent_id: "agent-parent" },
      delegation_chain: [],
      scope: { currency: "USD", maximum_amount: 1000, cumulative_maximum: 100_000 },
    });
    const child = fixtureDelegation(undefined, {
      delegation_id: "del-child",
      agent: { agent_id: "agent-sub" },
      delegation_chain: [parentLink(parent)],
      scope: { currency: "USD", maximum_amount: 1000, cumulative_maximum: 50_000 },
    });
    await withTransaction(pool, async (c) => {
      await upsertDelegation(c, parent, { orgId: "org_keys" });
      await upsertDelegation(c, child, { orgId: "org_keys" });
      await upsertAgreement(c, await buildSignedAgreement({ agreement_id: "agr-parent", mandates: [mandate("agent-parent")], at: iso(T0) }, principalKey), {
        delegationId: "del-parent",
        orgId: "org_keys",
      });
      await upsertAgreement(c, await buildSignedAgreement({ agreement_id: "agr-sub", mandates: [mandate("agent-sub")], at: iso(T0) }, principalKey), {
        delegationId: "del-child",
        orgId: "org_keys",
      });
    });
    const stored = await pool.query("SELECT delegation_id, chain_agents FROM delegations ORDER BY delegation_id");
    expect(stored.rows).toEqual([
      { delegation_id: "del-child", chain_agents: ["agent-parent"] },
      { delegation_id: "del-parent", chain_agents: [] },
    ]);

    const c = await pool.connect();
    const notices: string[] = [];
    const onNotice = (n: { message?: string }) => notices.push(n.message ?? "");
    c.on("notice", onNotice);
    try {
      await c.query("LOAD 'auto_explain'");
      await c.query("SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice");
    } finally {
      c.release();
    }
    try {
      const r = await recordAllowedSpend(pool, {
        agreementId: "agr-sub",
        agentId: "agent-sub",
        intentId: "i1",
        actionId: "act-1",
        amountMinor: 700n,
        currency: "USD",
        at: iso(T0 + 1000),
        revision: 1,
        limits: {
          sliceMinor: 10_000_000n,
          delegation: { delegationId: "del-child", cumulativeMinor: 5_000_000n, currency: "USD" },
          chain: { delegationId: "del-child", ancestorIds: ["del-parent"], currency: "USD", amountMinor: 700n },
        },
        decision: { agentId: "agent-sub", requestHash: `sha256:${"c".repeat(64)}`, body: { verdict: "ALLOW" } },
      });
      expect(r).toMatchObject({ recorded: true, delegationSpentMinor: 700n });
      expect(await recordOutcome(pool, { agreementId: "agr-sub", actionId: "act-1", outcome: "failed", at: iso(T0 + 2000) })).toMatchObject({
        recorded: true,
      });
    } finally {
      const done = await pool.connect();
      done.off("notice", onNotice);
      await done.query("SET auto_explain.log_min_duration = -1");
      done.release();
    }
    const found = scans(notices);
    // The spend's own rows and the parent's (locked and read by its agent), the ledger, the totals and the answer.
    expect(new Set(found.map((s) => s.table))).toEqual(new Set(PER_AGENT));
    // Read by another column: only the subtree's descendants (the chain's GIN index) and the outcome's first look-up,
    // which finds the agreement's agent from its id (the outcome's caller does not name the agent).
    const allowed = new Set(["delegations delegations_chain_ids_idx", "agreements agreements_agreement_id_idx"]);
    const byOtherKey = found.filter((s) => !/\bagent_id\b/.test(s.cond));
    expect(byOtherKey.filter((s) => !allowed.has(`${s.table} ${s.index}`))).toEqual([]);
    expect(byOtherKey.some((s) => s.cond === "SEQ SCAN")).toBe(false);
    // The parent row, another agent's, is read by the agent its child stored (chain_agents).
    expect(found.some((s) => s.table === "delegations" && /\bu\.ag = agent_id\b|\bagent_id = u\.ag\b/.test(s.cond))).toBe(true);
  });

  it("probe the hold and period tables by agent_id too: a spend with limits per period, a void that releases it, the expiry sweep", async () => {
    const AGENT = "agent-hp";
    const mandate: Mandate = {
      intent_id: "i1",
      principal: { ...PRINCIPAL },
      agent: { agent_id: AGENT },
      currency: "USD",
      maximum_amount: 1000,
      expires_at: iso(T0 + 86_400_000),
    };
    const scope = { currency: "USD", maximum_amount: 1000, time_zone: "UTC", period_limits: [{ period: "day" as const, amount: 500 }] };
    const del = fixtureDelegation(undefined, { delegation_id: "del-hp", agent: { agent_id: AGENT }, delegation_chain: [], scope });
    await withTransaction(pool, async (c) => {
      await upsertDelegation(c, del, { orgId: "org_keys" });
      await upsertAgreement(c, await buildSignedAgreement({ agreement_id: "agr-hp", mandates: [mandate], at: iso(T0) }, principalKey), {
        delegationId: "del-hp",
        orgId: "org_keys",
      });
    });
    // A calendar day and a rolling 24 hours on the intent, a calendar day on the delegation.
    const day = preparePeriods(
      [
        { period: "day", amount: 500 },
        { rolling: "PT24H", amount: 500 },
      ],
      "UTC",
      "USD",
    )!;
    const periods: SpendPeriods[] = [
      { owner: "intent", currency: "USD", amountMinor: 700n, periods: day },
      { owner: "delegation", delegationId: "del-hp", currency: "USD", amountMinor: 700n, periods: preparePeriods(scope.period_limits, "UTC", "USD")! },
    ];
    const spend = (actionId: string, at: number) =>
      recordAllowedSpend(pool, {
        agreementId: "agr-hp",
        agentId: AGENT,
        intentId: "i1",
        actionId,
        amountMinor: 700n,
        currency: "USD",
        at: iso(at),
        revision: 1,
        limits: { periods },
      });

    const c = await pool.connect();
    const notices: string[] = [];
    const onNotice = (n: { message?: string }) => notices.push(n.message ?? "");
    c.on("notice", onNotice);
    try {
      await c.query("LOAD 'auto_explain'");
      // No sequential scans of these few rows: the plans show the condition each statement probes by.
      await c.query(
        "SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice; SET enable_seqscan = off",
      );
    } finally {
      c.release();
    }
    try {
      expect(await spend("hp-1", T0 + 1000)).toMatchObject({ recorded: true });
      expect(await heldTotals(pool, AGENT, "agr-hp")).toEqual(new Map([["i1", 700n]]));
      expect(await recordHoldStep(pool, { agreementId: "agr-hp", actionId: "hp-1", step: { kind: "voided" }, at: iso(T0 + 2000) })).toMatchObject({
        recorded: true,
        replayed: false,
      });
      expect(await spend("hp-2", T0 + 3000)).toMatchObject({ recorded: true });
      expect(await expireHolds(pool, { before: new Date(Date.now() + 60_000), at: iso(T0 + 4000) })).toMatchObject({ expired: 1, agents: [AGENT] });
    } finally {
      const done = await pool.connect();
      done.off("notice", onNotice);
      await done.query("SET auto_explain.log_min_duration = -1; RESET enable_seqscan");
      done.release();
    }
    // Every row carries the agreement's agent, and the counters were given back by the void and the expiry.
    const events = await pool.query("SELECT agent_id, action_id, owner, amount_minor::text AS amount, released FROM period_events ORDER BY action_id, owner");
    expect(events.rows).toEqual([
      { agent_id: AGENT, action_id: "hp-1", owner: JSON.stringify(["delegation", AGENT, "del-hp"]), amount: "0", released: true },
      { agent_id: AGENT, action_id: "hp-1", owner: JSON.stringify(["intent", AGENT, "agr-hp", "i1"]), amount: "0", released: true },
      { agent_id: AGENT, action_id: "hp-2", owner: JSON.stringify(["delegation", AGENT, "del-hp"]), amount: "0", released: true },
      { agent_id: AGENT, action_id: "hp-2", owner: JSON.stringify(["intent", AGENT, "agr-hp", "i1"]), amount: "0", released: true },
    ]);
    const counters = await pool.query("SELECT DISTINCT agent_id, spent_minor::text AS spent, payments FROM period_spend");
    expect(counters.rows).toEqual([{ agent_id: AGENT, spent: "0", payments: 0 }]);
    expect((await pool.query("SELECT count(*)::int AS n FROM ledger_open_holds")).rows).toEqual([{ n: 0 }]);
    // Their keys lead with agent_id; an (action, outcome, step_key) of the ledger is unique per agent's agreement.
    const keys = await pool.query<{ conname: string; def: string }>(
      `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE conrelid IN ('ledger_entries'::regclass, 'ledger_open_holds'::regclass, 'period_events'::regclass, 'period_spend'::regclass)
         AND contype IN ('p', 'u') ORDER BY conname`,
    );
    expect(keys.rows).toEqual([
      { conname: "ledger_entries_action_outcome_key", def: "UNIQUE (agent_id, agreement_id, action_id, outcome, step_key)" },
      { conname: "ledger_entries_pkey", def: "PRIMARY KEY (agent_id, agreement_id, sequence)" },
      { conname: "ledger_open_holds_pkey", def: "PRIMARY KEY (agent_id, agreement_id, action_id)" },
      { conname: "period_events_pkey", def: "PRIMARY KEY (agent_id, agreement_id, action_id, owner)" },
      { conname: "period_spend_pkey", def: "PRIMARY KEY (agent_id, owner, currency, window_kind, window_start)" },
    ]);

    const found = scans(notices, [...PER_AGENT, ...HOLDS_AND_PERIODS]);
    expect(new Set(found.map((s) => s.table))).toEqual(new Set([...PER_AGENT, ...HOLDS_AND_PERIODS]));
    // Read by another column: a hold step's and an outcome's first look-up (the agreement's agent from its id) and the
    // sweep's list of the oldest open holds (every agent's, by when they were allowed).
    const allowed = new Set(["agreements agreements_agreement_id_idx", "ledger_open_holds ledger_open_holds_held_at_idx"]);
    const byOtherKey = found.filter((s) => !/\bagent_id\b/.test(s.cond));
    expect(byOtherKey.filter((s) => !allowed.has(`${s.table} ${s.index}`))).toEqual([]);
  });
});
