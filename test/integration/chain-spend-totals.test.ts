/**
 * The running totals of stored ancestors (delegation_spend, migrations/0540_delegation_spend.sql;
 * src/store/ledger/chain-spend.ts): a parent's subtree spend is its own agreements' totals plus
 * the running total of its descendants', which every change of a descendant's total keeps
 * exact in the same transaction: an ALLOW, a release, an agreement bound to another delegation,
 * a child re-declared once a link of its chain is stored. Over real HTTP and Postgres.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parentLink, type Delegation, type Scope } from "../../src/core/delegation/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { recordOutcome } from "../../src/store/ledger/index.js";
import { MIGRATIONS_DIR } from "../../src/store/migrate.js";
import { withTransaction } from "../../src/store/pool.js";
import { newGrant, payGrant, recordBareSpend, storedDelegation, type Grant } from "../helpers/chain-grants.js";
import { delegationRecord, HOUR, mandate, startVerifyWorld, storeAgreement, uid, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

const grant = (scope: Partial<Scope>, over: Partial<Delegation> = {}, id?: string): Promise<Grant> =>
  newGrant(w, scope, { maximum: 100, cumulative: 1000, over, ...(id !== undefined ? { id } : {}) });

const childOf = (parent: Delegation, scope: Partial<Scope> = { cumulative_maximum: 100 }) =>
  grant(scope, { delegation_chain: [parentLink(parent)], expires_at: parent.expires_at }, uid("del-child"));

const pay = (g: Grant, amount: number) => payGrant(w, g, amount);

/** The running total of `g`'s descendants, per currency. */
async function total(g: Grant): Promise<Record<string, string>> {
  const { rows } = await w.db.pool.query<{ currency: string; s: string }>(
    "SELECT currency, spent_minor::text AS s FROM delegation_spend WHERE agent_id = $1 AND delegation_id = $2 ORDER BY currency",
    [g.agentId, g.delegationId],
  );
  return Object.fromEntries(rows.map((r) => [r.currency, r.s]));
}

describe("a stored ancestor's running total of its descendants' spend", () => {
  it("is raised by a child's and a grandchild's ALLOWs, not by the ancestor's own, and lowered by a release", async () => {
    const parent = await grant({ cumulative_maximum: 100 });
    const child = await childOf(parent.record);
    const grandchild = await grant(
      { cumulative_maximum: 100 },
      { delegation_chain: [parentLink(parent.record), parentLink(child.record)], expires_at: parent.record.expires_at },
    );
    expect((await pay(parent, 10)).body).toMatchObject({ verdict: "ALLOW" });
    const first = await pay(child, 20);
    expect(first.body).toMatchObject({ verdict: "ALLOW" });
    expect((await pay(grandchild, 30)).body).toMatchObject({ verdict: "ALLOW" });
    expect(await total(parent)).toEqual({ USD: "5000" });
    expect(await total(child)).toEqual({ USD: "3000" });
    // 10 + 20 + 30 of 100 are spent under the parent.
    expect((await pay(grandchild, 41)).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });

    const actionId = String(first.body.action_id);
    expect(await recordOutcome(w.db.pool, { agreementId: child.agreementId, actionId, outcome: "failed", at: new Date().toISOString() })).toMatchObject({
      recorded: true,
    });
    expect(await total(parent)).toEqual({ USD: "3000" });
    expect((await pay(grandchild, 60)).body).toMatchObject({ verdict: "ALLOW" });
    expect(await total(parent)).toEqual({ USD: "9000" });
  });

  it("follows an agreement bound to another delegation of its agent", async () => {
    const parent = await grant({ cumulative_maximum: 100 });
    const child = await childOf(parent.record);
    expect((await pay(child, 40)).body).toMatchObject({ verdict: "ALLOW" });
    expect(await total(parent)).toEqual({ USD: "4000" });
    // Another delegation of the child's agent, without a chain: the agreement moves there with its 40.
    const other = delegationRecord(uid("del-other"), child.agentId, { at: Date.now() - HOUR, scope: {} });
    await withTransaction(w.db.pool, (c) => upsertDelegation(c, other, { orgId: w.operatorOrg }));
    await withTransaction(w.db.pool, (c) =>
      upsertAgreement(c, child.agreement, { delegationId: other.delegation_id, orgId: w.operatorOrg, agentId: child.agentId }),
    );
    expect(await total(parent)).toEqual({ USD: "0" });
    expect((await pay(parent, 100)).body).toMatchObject({ verdict: "ALLOW" });
  });

  it("takes in a child's earlier spend when the child is re-declared after a link of its chain was stored", async () => {
    // The child is stored citing a parent id not stored yet: nothing above it counts its spend.
    const parentId = uid("del-parent");
    const { agent_id: parentAgent } = await w.registerAgent(w.operatorKey);
    const draft = delegationRecord(parentId, parentAgent, { at: Date.now() - HOUR, scope: { cumulative_maximum: 100 } });
    const child = await childOf(draft);
    await recordBareSpend(w.db.pool, child, 6000n);
    // The parent is stored, then the child re-declared: its chain's link now names the parent's agent.
    const parent = await storeAgreement(w, {
      mandates: [mandate(parentAgent, "i1", { maximum_amount: 100, cumulative_maximum: 1000 })],
      delegation: { id: parentId, scope: { cumulative_maximum: 100 } },
    });
    const p: Grant = {
      agentId: parentAgent,
      agreementId: parent.agreementId,
      delegationId: parentId,
      record: await storedDelegation(w, parentId, parentAgent),
      agreement: parent.agreement,
    };
    await withTransaction(w.db.pool, (c) => upsertDelegation(c, child.record, { orgId: w.operatorOrg }));
    expect(await total(p)).toEqual({ USD: "6000" });
    expect((await pay(p, 50)).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });
    expect((await pay(p, 40)).body).toMatchObject({ verdict: "ALLOW" });
  });

  it("is what the migration fills in from the stored chains and totals (the tests above leave spend under several chains)", async () => {
    const sql = readFileSync(join(MIGRATIONS_DIR, "0540_delegation_spend.sql"), "utf8");
    const backfill = sql.slice(sql.indexOf("INSERT INTO delegation_spend"), sql.indexOf("-- Down Migration"));
    const read = async () =>
      (
        await w.db.pool.query<{ r: string }>(
          "SELECT agent_id || ' ' || delegation_id || ' ' || currency || ' ' || spent_minor AS r FROM delegation_spend WHERE spent_minor <> 0 ORDER BY 1",
        )
      ).rows.map((x) => x.r);
    const kept = await read();
    expect(kept.length).toBeGreaterThan(0);
    await withTransaction(w.db.pool, async (c) => {
      await c.query("DELETE FROM delegation_spend");
      await c.query(backfill);
    });
    expect(await read()).toEqual(kept);
  });
});
