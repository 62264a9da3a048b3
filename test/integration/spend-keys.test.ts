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
 * to this session as notices), as in ./spend-read-plan.test.ts.
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, type Mandate } from "../../src/core/agreement/index.js";
import { parentLink } from "../../src/core/delegation/index.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { recordAllowedSpend, recordOutcome } from "../../src/store/ledger/index.js";
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

/** Each scan of a per-agent table in `plans`, with the condition it scans by. */
function scans(plans: readonly string[]): { table: string; index: string; cond: string }[] {
  const out: { table: string; index: string; cond: string }[] = [];
  for (const plan of plans) {
    const lines = plan.split("\n");
    lines.forEach((line, i) => {
      const m = /(Seq Scan|Index Scan|Index Only Scan|Bitmap Heap Scan)(?: using (\w+))? on (\w+)/.exec(line);
      if (!m || !PER_AGENT.includes(m[3] as string)) return;
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
});
