/**
 * Sub-delegations are judged by the delegations their chain cites AS STORED, never by the
 * copies a child carries (issue 27, hole 5; docs/threat-model/chains.md): narrowing, expiry,
 * suspension and revocation at evaluation (src/verify/pipeline/stored-chain.ts), the declared copy at
 * reconcile (storedChainRefusals), and every ancestor's cumulative budget in the spend
 * transaction of the child's ledger entry (src/store/ledger/spend.ts), over real HTTP and
 * Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parentLink, prepareDelegation, type ChainLink, type Delegation, type Scope } from "../../src/core/delegation/index.js";
import { storedChainRefusals } from "../../src/controller/reconcilers/delegation-checks.js";
import { recordAllowedSpend, recordOutcome } from "../../src/store/ledger/index.js";
import { loadStoredChain, revokeDelegation, upsertDelegation } from "../../src/store/delegations.js";
import { withTransaction } from "../../src/store/pool.js";
import { newGrant, payGrant, type Grant } from "../helpers/chain-grants.js";
import { iso, startVerifyWorld, uid, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

/** A direct grant (a new agent) with `scope` and one intent allowing up to `limit` per action and in all. */
const rootGrant = (scope: Partial<Scope>, limit: number, orgId?: string): Promise<Grant> =>
  newGrant(w, scope, { maximum: limit, cumulative: limit, ...(orgId !== undefined ? { orgId } : {}) });

/**
 * A sub-delegation of `parent` to a new agent with `scope`, one intent of `limit`; its chain is
 * `chain` (default: the stored parent's chain plus the parent's exact link, as `writ delegation
 * narrow` derives it). Stored through the store, which takes any chain.
 */
const childGrant = (parent: Delegation, scope: Partial<Scope>, limit: number, chain?: ChainLink[]): Promise<Grant> =>
  newGrant(w, scope, {
    maximum: limit,
    cumulative: limit,
    id: uid("del-child"),
    over: { delegation_chain: chain ?? [...parent.delegation_chain, parentLink(parent)], expires_at: parent.expires_at },
  });

/** The first message of a verify answer. */
const firstMessage = (body: Record<string, unknown>): string => String((body.messages as { message?: unknown }[] | undefined)?.[0]?.message);

const pay = (g: Grant, amount: number) => payGrant(w, g, amount);

describe("a child's chain is the stored parent, not its copy", () => {
  it("refuses a child that cites a fully spent 1,000 USD parent with an inflated copy: 5,000 USD is never ALLOWed", async () => {
    const parent = await rootGrant({ maximum_amount: 1000, cumulative_maximum: 1000 }, 1000);
    expect((await pay(parent, 1000)).body).toMatchObject({ verdict: "ALLOW" });

    // The operator declares the parent's link with ten times its budget, and a 5,000 USD child under it.
    const inflated: ChainLink = { ...parentLink(parent.record), scope: { currency: "USD", maximum_amount: 10_000, cumulative_maximum: 10_000 } };
    const child = await childGrant(parent.record, { maximum_amount: 5000, cumulative_maximum: 5000 }, 5000, [inflated]);

    // Reconcile time: the controller's check against the stored parent refuses the declaration.
    const ancestors = await loadStoredChain(w.db.pool, w.operatorOrg, [parent.delegationId]);
    const refusals = storedChainRefusals(prepareDelegation(child.record), w.operatorOrg, ancestors);
    expect(refusals.map((r) => r.code)).toEqual(["CHAIN_SCOPE_WIDENED", "CHAIN_BROKEN"]);
    expect(refusals[0]?.message).toMatch(/maximum_amount: 5000\.00 > 1000\.00 USD/);
    expect(refusals[1]?.message).toMatch(/link 1 \(.*\) is not a copy of the stored delegation it cites: scope differs/);

    // Evaluation: even stored, the child is judged against the stored parent.
    const r = await pay(child, 5000);
    expect(r.body.verdict).toBe("DENY");
    expect(r.body.reasons).toContain("CHAIN_SCOPE_WIDENED");
    const { rows } = await w.db.pool.query("SELECT 1 FROM ledger_entries WHERE agreement_id = $1", [child.agreementId]);
    expect(rows).toHaveLength(0);
  });

  it("a child that copies its parent exactly still cannot spend what the parent has spent", async () => {
    const parent = await rootGrant({ maximum_amount: 1000, cumulative_maximum: 1000 }, 1000);
    expect((await pay(parent, 1000)).body).toMatchObject({ verdict: "ALLOW" });
    const child = await childGrant(parent.record, { maximum_amount: 1000, cumulative_maximum: 1000 }, 1000);
    expect(storedChainRefusals(prepareDelegation(child.record), w.operatorOrg, await loadStoredChain(w.db.pool, w.operatorOrg, [parent.delegationId]))).toEqual(
      [],
    );

    const r = await pay(child, 500);
    expect(r.body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });
    expect(firstMessage(r.body)).toContain(
      `spent under delegation ${parent.delegationId} and the delegations below it exceeds its cumulative maximum 1000.00 USD`,
    );
  });

  it("two children of one parent spending concurrently cannot exceed the parent's cumulative budget together, and the parent's own spend counts theirs", async () => {
    const parent = await rootGrant({ cumulative_maximum: 100 }, 100);
    const a = await childGrant(parent.record, { cumulative_maximum: 100 }, 100);
    const b = await childGrant(parent.record, { cumulative_maximum: 100 }, 100);

    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => pay(i % 2 === 0 ? a : b, 30)));
    const allowed = answers.filter((x) => x.body.verdict === "ALLOW");
    expect(allowed).toHaveLength(3);
    // A refusal names a budget: the parent's, or (when one child alone took all three) that child's own intent total too.
    for (const x of answers)
      if (x.body.verdict !== "ALLOW") expect(x.body.reasons).toEqual([expect.stringMatching(/^(DELEGATION|CUMULATIVE)_BUDGET_EXCEEDED$/)]);
    const { rows } = await w.db.pool.query<{ spent: string }>(
      "SELECT coalesce(sum(spent_minor), 0)::text AS spent FROM agreement_spend WHERE agreement_id = ANY($1::text[])",
      [[a.agreementId, b.agreementId]],
    );
    expect(rows[0]?.spent).toBe("9000");

    // The parent's own agreement: 90 of its 100 are spent below it.
    expect((await pay(parent, 20)).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });
    expect((await pay(parent, 10)).body).toMatchObject({ verdict: "ALLOW" });
    expect((await pay(a, 1)).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });
  });

  it("a spend on a chained delegation that does not declare its stored chain is refused in the spend transaction", async () => {
    const parent = await rootGrant({ cumulative_maximum: 100 }, 100);
    const child = await childGrant(parent.record, {}, 100);
    const r = await recordAllowedSpend(w.db.pool, {
      agreementId: child.agreementId,
      intentId: "i1",
      actionId: uid("act"),
      amountMinor: 1000n,
      currency: "USD",
      at: iso(Date.now()),
    });
    expect(r).toMatchObject({ recorded: false, reason: "CHAIN_BROKEN" });
  });
});

describe("a parent's revocation, suspension or expiry reaches its children at evaluation", () => {
  it("parent revoked: the child's verify is refused, also when the child linked itself to a copy of the parent under another id", async () => {
    const parent = await rootGrant({ cumulative_maximum: 1000 }, 1000);
    const honest = await childGrant(parent.record, { cumulative_maximum: 100 }, 100);
    // The copy names the parent's agent as delegator's delegate, under an id nothing stores.
    const copy: ChainLink = { ...parentLink(parent.record), delegation_id: uid("del-copy") };
    const forged = await childGrant(parent.record, { cumulative_maximum: 100 }, 100, [copy]);

    expect((await pay(honest, 10)).body.verdict).toBe("ALLOW");
    const before = await pay(forged, 10);
    expect(before.body).toMatchObject({ verdict: "DENY", reasons: ["CHAIN_BROKEN"] });
    expect(firstMessage(before.body)).toMatch(/link 1 \(del-copy-.*\) is not a stored delegation/);

    await withTransaction(w.db.pool, (c) =>
      revokeDelegation(c, w.operatorOrg, parent.delegationId, { reason: "principal revoked", by: "principal", at: new Date() }),
    );
    await expect.poll(async () => (await pay(honest, 10)).body.verdict, { timeout: 5000, interval: 50 }).toBe("DENY");
    expect((await pay(forged, 10)).body.verdict).toBe("DENY");
  });

  it("parent shortened after the child was stored: the child lapses with it (CHAIN_LINK_EXPIRED)", async () => {
    const parent = await rootGrant({ cumulative_maximum: 1000 }, 1000);
    const child = await childGrant(parent.record, { cumulative_maximum: 100 }, 100);
    expect((await pay(child, 10)).body.verdict).toBe("ALLOW");

    const { intent_agreement: _a, ...shortened } = { ...parent.record, expires_at: iso(Date.now() - 60_000) };
    await withTransaction(w.db.pool, (c) => upsertDelegation(c, shortened, { orgId: w.operatorOrg }));
    const r = await pay(child, 10);
    expect(r.body).toMatchObject({ verdict: "DENY" });
    expect(r.body.reasons).toContain("CHAIN_LINK_EXPIRED");
  });

  it("parent suspended after the child was stored: the child is suspended with it (DELEGATION_SUSPENDED), and lives again when the parent does", async () => {
    const parent = await rootGrant({ cumulative_maximum: 1000 }, 1000);
    const child = await childGrant(parent.record, { cumulative_maximum: 100 }, 100);
    expect((await pay(child, 10)).body.verdict).toBe("ALLOW");

    const { intent_agreement: _a, ...suspended } = { ...parent.record, status: "suspended" as const };
    await withTransaction(w.db.pool, (c) => upsertDelegation(c, suspended, { orgId: w.operatorOrg }));
    const r = await pay(child, 10);
    expect(r.body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_SUSPENDED"] });
    expect(firstMessage(r.body)).toBe(`link 1 (${parent.delegationId}) is suspended, which suspends everything below it`);

    const { intent_agreement: _b, ...active } = parent.record;
    await withTransaction(w.db.pool, (c) => upsertDelegation(c, active, { orgId: w.operatorOrg }));
    expect((await pay(child, 10)).body.verdict).toBe("ALLOW");
  });

  it("parent narrowed after the child was stored: the child is judged against the narrower parent", async () => {
    const parent = await rootGrant({ maximum_amount: 500 }, 500);
    const child = await childGrant(parent.record, { maximum_amount: 300 }, 300);
    expect((await pay(child, 100)).body.verdict).toBe("ALLOW");
    await withTransaction(w.db.pool, (c) =>
      upsertDelegation(c, { ...parent.record, scope: { currency: "USD", maximum_amount: 100 } }, { orgId: w.operatorOrg }),
    );
    // 150 is within the child's own ceiling (300) and its intent's remaining 200: only the stored parent refuses it.
    expect((await pay(child, 150)).body).toMatchObject({ verdict: "DENY", reasons: ["CHAIN_SCOPE_WIDENED"] });
  });

  it("a child citing another organization's delegation is broken", async () => {
    const other = await w.createOrg("agent_operator");
    const parent = await rootGrant({ cumulative_maximum: 1000 }, 1000);
    // The same record stored again under a new id for another organization: the child cites that one.
    const foreign: Delegation = { ...parent.record, delegation_id: uid("del-foreign") };
    await withTransaction(w.db.pool, (c) => upsertDelegation(c, foreign, { orgId: other }));
    const child = await childGrant(foreign, { cumulative_maximum: 100 }, 100);
    const r = await pay(child, 10);
    expect(r.body).toMatchObject({ verdict: "DENY", reasons: ["CHAIN_BROKEN"] });
    // Verify reads a chain's links within the child's organization only (an id names a delegation only there): the other organization's is not one of its stored grants.
    expect(firstMessage(r.body)).toMatch(/is not a stored delegation/);
  });
});

describe("a parent's limits per period bind every delegation below it (issue 27, rule 5)", () => {
  const daily = { period_limits: [{ period: "day" as const, amount: 100 }] };

  it("a released spend of a child gives its share back to the parent's window, which is a row of the parent's agent", async () => {
    const parent = await rootGrant(daily, 1000);
    const a = await childGrant(parent.record, daily, 1000);
    const first = await pay(a, 60);
    expect(first.body).toMatchObject({ verdict: "ALLOW" });
    expect((await pay(a, 60)).body).toMatchObject({ verdict: "DENY", reasons: ["PERIOD_LIMIT_EXCEEDED"] });
    const actionId = (first.body as { action_id: string }).action_id;
    const r = await recordOutcome(w.db.pool, { agreementId: a.agreementId, actionId, outcome: "failed", at: new Date().toISOString() });
    expect(r).toMatchObject({ recorded: true, replayed: false });
    // Both windows (a's own, and the parent's held by the parent's agent) gave the 60 back.
    const { rows } = await w.db.pool.query<{ agent_id: string; spent: string; payments: number }>(
      "SELECT agent_id, spent_minor::text AS spent, payments FROM period_spend WHERE owner = ANY($1::text[]) ORDER BY agent_id",
      [[parent, a].map((g) => JSON.stringify(["delegation", g.agentId, g.delegationId]))],
    );
    expect(rows.map((x) => [x.agent_id, x.spent, x.payments])).toEqual(
      [parent, a].map((g) => [g.agentId, "0", 0]).sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    expect((await pay(a, 60)).body).toMatchObject({ verdict: "ALLOW" });
  });

  it("a child that drops its parent's daily limit is wider than the stored parent: refused at reconcile and at evaluation", async () => {
    const parent = await rootGrant(daily, 1000);
    const child = await childGrant(parent.record, {}, 1000);
    // Its chain is an exact copy of the stored parent, so the narrowing check of its own chain (prepareChain) finds it.
    expect(prepareDelegation(child.record).chainWidened).toMatch(/period_limits: the parent's day in UTC limit is absent/);
    // A looser copy of the limit is wider too.
    const looser = await childGrant(parent.record, { period_limits: [{ period: "day", amount: 150 }] }, 1000);
    expect(prepareDelegation(looser.record).chainWidened).toMatch(/period_limits: the day in UTC amount 150\.00 > 100\.00 USD/);

    for (const g of [child, looser]) {
      const r = await pay(g, 60);
      expect(r.body).toMatchObject({ verdict: "DENY", reasons: ["CHAIN_SCOPE_WIDENED"] });
    }
  });

  it("spend through children and a grandchild counts in the parent's daily window: together they never pass its limit", async () => {
    const parent = await rootGrant(daily, 1000);
    const a = await childGrant(parent.record, daily, 1000);
    const b = await childGrant(parent.record, daily, 1000);
    const grandchild = await childGrant(a.record, daily, 1000);
    expect(storedChainRefusals(prepareDelegation(b.record), w.operatorOrg, await loadStoredChain(w.db.pool, w.operatorOrg, [parent.delegationId]))).toEqual([]);

    expect((await pay(parent, 30)).body).toMatchObject({ verdict: "ALLOW" });
    expect((await pay(a, 40)).body).toMatchObject({ verdict: "ALLOW" });
    // 40 is within b's own day (nothing spent under b), not within the parent's (70 of 100 spent below it).
    const r = await pay(b, 40);
    expect(r.body).toMatchObject({ verdict: "DENY", reasons: ["PERIOD_LIMIT_EXCEEDED"] });
    expect(firstMessage(r.body)).toContain(`on top of 70.00 USD spent in the`);
    expect(firstMessage(r.body)).toContain(`under delegation ${parent.delegationId} exceeds its limit 100.00 USD`);
    expect((await pay(grandchild, 20)).body).toMatchObject({ verdict: "ALLOW" });
    expect((await pay(b, 11)).body).toMatchObject({ verdict: "DENY", reasons: ["PERIOD_LIMIT_EXCEEDED"] });
    expect((await pay(b, 10)).body).toMatchObject({ verdict: "ALLOW" });
    for (const g of [parent, a, b, grandchild]) expect((await pay(g, 1)).body).toMatchObject({ verdict: "DENY", reasons: ["PERIOD_LIMIT_EXCEEDED"] });

    // The counters: the parent's window holds everything below it, a's holds a's and the grandchild's;
    // each is a row of the delegation's own agent, whichever agent below it spent.
    const { rows } = await w.db.pool.query<{ agent_id: string; owner: string; spent: string; payments: number }>(
      "SELECT agent_id, owner, spent_minor::text AS spent, payments FROM period_spend WHERE owner = ANY($1::text[]) ORDER BY owner",
      [[parent, a].map((g) => JSON.stringify(["delegation", g.agentId, g.delegationId]))],
    );
    expect(Object.fromEntries(rows.map((x) => [x.owner, [x.agent_id, x.spent, x.payments]]))).toEqual({
      [JSON.stringify(["delegation", parent.agentId, parent.delegationId])]: [parent.agentId, "10000", 4],
      [JSON.stringify(["delegation", a.agentId, a.delegationId])]: [a.agentId, "6000", 2],
    });
  });
});
