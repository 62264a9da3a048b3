/**
 * The claim tables (migrations/0322_record_claims.sql, src/store/record-ids.ts): a delegation or
 * agreement id is unique through its row in `record_ids`, written in the transaction that
 * stores the record, not through a key of the per-agent tables (keyed by agent_id first); a
 * stored record's agent never changes.
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, type Mandate } from "../../src/core/agreement/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { recordAllowedSpend, spendTotals } from "../../src/store/ledger/index.js";
import { withTransaction } from "../../src/store/pool.js";
import { delegation as fixtureDelegation, iso, principalKey, PRINCIPAL, T0 } from "../fixtures/records.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  pool = db.pool;
});
afterAll(async () => {
  await db?.drop();
});

const mandate = (agentId: string): Mandate => ({
  intent_id: "i1",
  principal: { ...PRINCIPAL },
  agent: { agent_id: agentId },
  currency: "USD",
  maximum_amount: 1000,
  cumulative_maximum: 100_000,
  expires_at: iso(T0 + 86_400_000),
});

async function declare(id: string, agentId: string, orgId = "org_claims"): Promise<void> {
  const d = fixtureDelegation(undefined, { delegation_id: `del-${id}`, agent: { agent_id: agentId }, delegation_chain: [] });
  const a = await buildSignedAgreement({ agreement_id: `agr-${id}`, mandates: [mandate(agentId)], at: iso(T0) }, principalKey);
  await withTransaction(pool, async (c) => {
    await upsertDelegation(c, { ...d, intent_agreement: a }, { orgId });
  });
}

const claims = async (id: string) =>
  (await pool.query("SELECT kind, record_id, org_id, agent_id FROM record_ids WHERE record_id IN ($1, $2) ORDER BY kind", [`del-${id}`, `agr-${id}`])).rows;

describe("record_ids", () => {
  it("holds one claim per stored id, with its organization and agent; a re-declaration for another agent is refused and moves nothing", async () => {
    await declare("move", "agent-one");
    expect(await claims("move")).toEqual([
      { kind: "agreement", record_id: "agr-move", org_id: "org_claims", agent_id: "agent-one" },
      { kind: "delegation", record_id: "del-move", org_id: "org_claims", agent_id: "agent-one" },
    ]);
    const spend = (actionId: string) =>
      recordAllowedSpend(pool, { agreementId: "agr-move", intentId: "i1", actionId, amountMinor: 500n, currency: "USD", at: iso(T0 + 1000), revision: 1 });
    expect(await spend("a-1")).toMatchObject({ recorded: true });

    // The agent is the first column of every key of the record's rows: it never changes.
    await expect(declare("move", "agent-two")).rejects.toMatchObject({
      code: "RECORD_INVALID",
      message: expect.stringContaining("stored for agent agent-one"),
    });
    const a = await buildSignedAgreement({ agreement_id: "agr-move", mandates: [mandate("agent-two")], at: iso(T0) }, principalKey);
    await expect(withTransaction(pool, (c) => upsertAgreement(c, a, { orgId: "org_claims" }))).rejects.toMatchObject({ code: "RECORD_INVALID" });
    expect((await claims("move")).map((c) => c.agent_id)).toEqual(["agent-one", "agent-one"]);
    for (const table of ["delegations", "agreements", "agreement_ledger_heads", "ledger_entries", "agreement_spend"]) {
      const { rows } = await pool.query(
        `SELECT DISTINCT agent_id FROM ${table} WHERE ${table === "delegations" ? "delegation_id = 'del-move'" : "agreement_id = 'agr-move'"}`,
      );
      expect(rows, table).toEqual([{ agent_id: "agent-one" }]);
    }
    expect((await spendTotals(pool, "agr-move")).get("i1")).toBe(500n);
    expect(await spend("a-2")).toMatchObject({ recorded: true, entry: { sequence: 2 } });
  });

  it("keeps an id stored once when two transactions store it together: the second waits for the first's claim, then updates its row", async () => {
    const d = fixtureDelegation(undefined, { delegation_id: "del-race", agent: { agent_id: "agent-race" }, delegation_chain: [] });
    const first = await pool.connect();
    const second = await pool.connect();
    try {
      await first.query("BEGIN");
      await upsertDelegation(first, d, { orgId: "org_claims" });
      const pid = (await second.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
      await second.query("BEGIN");
      const storing = upsertDelegation(second, d, { orgId: "org_claims" });
      // The second transaction waits on the first's claim (bounded wait on its state, not a sleep).
      const deadline = Date.now() + 10_000;
      for (;;) {
        const { rows } = await pool.query<{ w: string | null }>("SELECT wait_event_type AS w FROM pg_stat_activity WHERE pid = $1", [pid]);
        if (rows[0]?.w === "Lock") break;
        if (Date.now() > deadline) throw new Error("the second transaction never waited for the first");
        await new Promise((r) => setImmediate(r));
      }
      await first.query("COMMIT");
      expect(await storing).toMatchObject({ delegationId: "del-race", created: false });
      await second.query("COMMIT");
    } finally {
      await first.query("ROLLBACK").catch(() => {});
      await second.query("ROLLBACK").catch(() => {});
      first.release();
      second.release();
    }
    expect((await claims("race")).map((c) => c.kind)).toEqual(["delegation"]);
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM delegations WHERE delegation_id = 'del-race'");
    expect(rows[0]).toEqual({ n: 1 });
  });
});
