/**
 * A delegation chain across agents on a real Citus cluster (docs/scale.md, "A delegation chain
 * across agents"; trust rule 5): a parent delegation of one agent and sub-delegations of other
 * agents whose shards are on the other worker. Each stored ancestor keeps the running total of
 * its descendants' spend on its own shard (delegation_spend), raised under its row lock in the
 * child's spend transaction, which then commits in two phases; an ALLOW of an agent without a
 * chain above it (also the parent's own) stays a transaction on one worker.
 *
 * The cluster is the one `WRIT_TEST_CITUS=1` gives every suite (test/helpers/pg.ts), and the
 * world is the in-process one of the other verify tests.
 */
import { readdirSync } from "node:fs";
import { runner } from "node-pg-migrate";
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionCitus } from "../../hack/citus/cluster.js";
import { parentLink, type Delegation, type Scope } from "../../src/core/delegation/index.js";
import type { IntentAgreement } from "../../src/core/agreement/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { recordOutcome } from "../../src/store/ledger/index.js";
import { loadDelegation, upsertDelegation } from "../../src/store/delegations.js";
import { migrate, MIGRATIONS_DIR, MIGRATIONS_TABLE } from "../../src/store/migrate.js";
import { withTransaction } from "../../src/store/pool.js";
import { recordBareSpend } from "../helpers/chain-grants.js";
import { action, delegationRecord, HOUR, mandate, startVerifyWorld, storeAgreement, uid, type VerifyWorld } from "../helpers/verify-world.js";

// Skipped only when Citus is neither installed nor buildable here (its source folder is not
// beside the repository, WRIT_CITUS_SOURCE): .ci/run builds it, so in CI these tests run.
const tools = provisionCitus();

interface Grant {
  agentId: string;
  agreementId: string;
  delegationId: string;
  record: Delegation;
  agreement: IntentAgreement;
}

describe.skipIf(tools === null)("a sub-agent chain on a Citus cluster (coordinator + 2 workers)", () => {
  let w: VerifyWorld;
  let pool: Pool;

  beforeAll(async () => {
    const before = process.env.WRIT_TEST_CITUS;
    process.env.WRIT_TEST_CITUS = "1";
    try {
      w = await startVerifyWorld();
    } finally {
      if (before === undefined) delete process.env.WRIT_TEST_CITUS;
      else process.env.WRIT_TEST_CITUS = before;
    }
    pool = w.db.pool;
    // Keep every two-phase commit in pg_dist_transaction (its recovery would remove them), so the test counts them.
    await pool.query("ALTER SYSTEM SET citus.recover_2pc_interval = -1");
    await pool.query("SELECT pg_reload_conf()");
  }, 240_000);

  afterAll(async () => {
    await w?.close();
  }, 60_000);

  /** The port of the worker holding `table`'s shard of `agentId`. */
  async function workerOf(agentId: string, table = "delegations"): Promise<number> {
    const { rows } = await pool.query<{ port: number }>(
      "SELECT nodeport AS port FROM citus_shards WHERE shardid = get_shard_id_for_distribution_column($2::regclass, $1::text)",
      [agentId, table],
    );
    return rows[0]?.port as number;
  }

  /** New agents: one on a worker, `n` on the other (bounded: each agent lands on either worker). */
  async function agentsApart(n: number): Promise<{ parent: string; children: string[] }> {
    const byPort = new Map<number, string[]>();
    for (let i = 0; i < 40; i++) {
      const { agent_id } = await w.registerAgent(w.operatorKey);
      const port = await workerOf(agent_id);
      byPort.set(port, [...(byPort.get(port) ?? []), agent_id]);
      const ports = [...byPort.keys()];
      for (const p of ports) {
        const other = ports.find((q) => q !== p);
        if (other !== undefined && (byPort.get(other)?.length ?? 0) >= n) {
          return { parent: (byPort.get(p) as string[])[0] as string, children: (byPort.get(other) as string[]).slice(0, n) };
        }
      }
    }
    throw new Error("no agents on two workers after 40 registrations");
  }

  async function stored(id: string, agentId: string): Promise<Delegation> {
    const d = await loadDelegation(pool, id, agentId);
    if (!d) throw new Error(`delegation ${id} is not stored`);
    return d.record;
  }

  async function rootGrant(agentId: string, scope: Partial<Scope>, id?: string): Promise<Grant> {
    const s = await storeAgreement(w, {
      mandates: [mandate(agentId, "i1", { maximum_amount: 100, cumulative_maximum: 1000 })],
      delegation: { scope, ...(id !== undefined ? { id } : {}) },
    });
    const delegationId = s.delegationId as string;
    return { agentId, agreementId: s.agreementId, delegationId, record: await stored(delegationId, agentId), agreement: s.agreement };
  }

  async function childGrant(agentId: string, parent: Delegation, scope: Partial<Scope>): Promise<Grant> {
    const s = await storeAgreement(w, {
      mandates: [mandate(agentId, "i1", { maximum_amount: 100, cumulative_maximum: 1000 })],
      delegation: { id: uid("del-child"), scope, over: { delegation_chain: [parentLink(parent)], expires_at: parent.expires_at } },
    });
    const delegationId = s.delegationId as string;
    return { agentId, agreementId: s.agreementId, delegationId, record: await stored(delegationId, agentId), agreement: s.agreement };
  }

  const pay = (g: Grant, amount: number) => w.verify({ agent_id: g.agentId, agreement_id: g.agreementId, action: action({ amount }) });

  /**
   * Rounds of `perRound` concurrent 1 USD verifies, alternating between `children`, until a round
   * allows nothing (at most `maxRounds`): the ALLOWed actions per child.
   */
  async function spendConcurrently(children: readonly Grant[], perRound: number, maxRounds: number): Promise<Map<string, string[]>> {
    const allowed = new Map<string, string[]>(children.map((c) => [c.agentId, []]));
    for (let round = 0; round < maxRounds; round++) {
      const answers = await Promise.all(
        Array.from({ length: perRound }, async (_, i) => {
          const c = children[i % children.length] as Grant;
          return { c, r: await pay(c, 1) };
        }),
      );
      for (const { r } of answers) expect(r.status, JSON.stringify(r.body)).toBe(200);
      const ok = answers.filter((x) => x.r.body.verdict === "ALLOW");
      for (const x of ok) allowed.get(x.c.agentId)?.push(String(x.r.body.action_id));
      if (ok.length === 0) {
        if (round === 0) expect.fail(`nothing allowed: ${JSON.stringify(answers[0]?.r.body)}`);
        break;
      }
    }
    return allowed;
  }

  const count = (m: Map<string, string[]>) => [...m.values()].reduce((n, xs) => n + xs.length, 0);

  it("two children on the other worker spending concurrently never pass their parent's cumulative maximum; its running total is on its own worker", async () => {
    const { parent: p, children: cs } = await agentsApart(2);
    const parent = await rootGrant(p, { cumulative_maximum: 30 });
    const children = [
      await childGrant(cs[0] as string, parent.record, { cumulative_maximum: 30 }),
      await childGrant(cs[1] as string, parent.record, { cumulative_maximum: 30 }),
    ];
    expect(await workerOf(parent.agentId)).not.toBe(await workerOf(children[0]?.agentId as string));

    const allowed = await spendConcurrently(children, 8, 8);
    expect(count(allowed)).toBe(30);
    const spent = await pool.query<{ s: string }>(
      "SELECT coalesce(sum(spent_minor), 0)::text AS s FROM agreement_spend WHERE agent_id = ANY($1::text[]) AND agreement_id = ANY($2::text[])",
      [children.map((c) => c.agentId), children.map((c) => c.agreementId)],
    );
    expect(spent.rows[0]?.s).toBe("3000");
    // The parent's running total of its descendants, a row of the parent's key on the parent's worker.
    const total = await pool.query<{ s: string }>(
      "SELECT spent_minor::text AS s FROM delegation_spend WHERE agent_id = $1 AND delegation_id = $2 AND currency = 'USD'",
      [parent.agentId, parent.delegationId],
    );
    expect(total.rows.map((r) => r.s)).toEqual(["3000"]);
    expect(await workerOf(parent.agentId, "delegation_spend")).toBe(await workerOf(parent.agentId));
    // The parent's own agreement sees its subtree's spend: nothing is left.
    expect((await pay(parent, 1)).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });

    // A released spend of a child gives its share back to the parent's total (a two-worker transaction too).
    const first = allowed.get(children[0]?.agentId as string)?.[0] as string;
    const r = await recordOutcome(pool, { agreementId: children[0]?.agreementId as string, actionId: first, outcome: "failed", at: new Date().toISOString() });
    expect(r).toMatchObject({ recorded: true, replayed: false });
    const after = await pool.query<{ s: string }>("SELECT spent_minor::text AS s FROM delegation_spend WHERE agent_id = $1 AND delegation_id = $2", [
      parent.agentId,
      parent.delegationId,
    ]);
    expect(after.rows.map((x) => x.s)).toEqual(["2900"]);
    expect((await pay(children[1] as Grant, 1)).body).toMatchObject({ verdict: "ALLOW" });
    expect((await pay(children[0] as Grant, 1)).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });
  }, 120_000);

  it("a parent's daily limit binds its children on the other worker: concurrent spends never pass it, counted in the parent's window on its own worker", async () => {
    const { parent: p, children: cs } = await agentsApart(2);
    const daily = { period_limits: [{ period: "day" as const, amount: 20 }] };
    const parent = await rootGrant(p, daily);
    const children = [await childGrant(cs[0] as string, parent.record, daily), await childGrant(cs[1] as string, parent.record, daily)];

    const allowed = await spendConcurrently(children, 8, 8);
    expect(count(allowed)).toBe(20);
    const owner = JSON.stringify(["delegation", parent.agentId, parent.delegationId]);
    const windows = await pool.query<{ s: string; n: number }>(
      "SELECT spent_minor::text AS s, payments AS n FROM period_spend WHERE agent_id = $1 AND owner = $2",
      [parent.agentId, owner],
    );
    expect(windows.rows.map((x) => [x.s, x.n])).toEqual([["2000", 20]]);
    expect(await workerOf(parent.agentId, "period_spend")).toBe(await workerOf(parent.agentId));
  }, 120_000);

  it("commits a child's ALLOW under another agent's parent in two phases, and the parent's own ALLOW and an agent without a chain on one worker", async () => {
    const { parent: p, children: cs } = await agentsApart(1);
    const parent = await rootGrant(p, { cumulative_maximum: 1000 });
    const child = await childGrant(cs[0] as string, parent.record, { cumulative_maximum: 1000 });
    const { agent_id: plain } = await w.registerAgent(w.operatorKey);
    const lone = await storeAgreement(w, { mandates: [mandate(plain, "i1", { maximum_amount: 100, cumulative_maximum: 1000 })] });
    const twoPhase = async () => (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_dist_transaction")).rows[0]?.n ?? 0;

    const before = await twoPhase();
    for (let i = 0; i < 3; i++)
      expect((await w.verify({ agent_id: plain, agreement_id: lone.agreementId, action: action({ amount: 1 }) })).body).toMatchObject({ verdict: "ALLOW" });
    for (let i = 0; i < 3; i++) expect((await pay(parent, 1)).body).toMatchObject({ verdict: "ALLOW" });
    // Neither an agent without a chain nor the parent (whose subtree's total is its own row) wrote on two nodes.
    expect(await twoPhase()).toBe(before);
    for (let i = 0; i < 3; i++) expect((await pay(child, 1)).body).toMatchObject({ verdict: "ALLOW" });
    // Each of the child's ALLOWs raised the parent's total on the parent's worker: a two-phase commit on the two workers.
    expect(await twoPhase()).toBeGreaterThanOrEqual(before + 3 * 2);
  }, 120_000);

  /** The running total of `g`'s descendants in USD (minor units, "0" when it has none). */
  async function usd(g: Grant): Promise<string> {
    const { rows } = await pool.query<{ s: string }>(
      "SELECT coalesce(sum(spent_minor), 0)::text AS s FROM delegation_spend WHERE agent_id = $1 AND delegation_id = $2 AND currency = 'USD'",
      [g.agentId, g.delegationId],
    );
    return rows[0]?.s ?? "0";
  }

  it("moves a child's total out of its parent on the other worker when its agreement is bound to another delegation of its agent (a two-phase commit with the agreement's notice)", async () => {
    const { parent: p, children: cs } = await agentsApart(1);
    const parent = await rootGrant(p, { cumulative_maximum: 100 });
    const child = await childGrant(cs[0] as string, parent.record, { cumulative_maximum: 100 });
    expect((await pay(child, 40)).body).toMatchObject({ verdict: "ALLOW" });
    expect(await usd(parent)).toBe("4000");
    const other = delegationRecord(uid("del-other"), child.agentId, { at: Date.now() - HOUR, scope: {} });
    await withTransaction(pool, (c) => upsertDelegation(c, other, { orgId: w.operatorOrg }));
    await withTransaction(pool, (c) =>
      upsertAgreement(c, child.agreement, { delegationId: other.delegation_id, orgId: w.operatorOrg, agentId: child.agentId }),
    );
    expect(await usd(parent)).toBe("0");
    expect((await pay(parent, 100)).body).toMatchObject({ verdict: "ALLOW" });
  }, 120_000);

  it("takes a child's earlier spend into its parent on the other worker once the parent is stored and the child re-declared", async () => {
    const { parent: parentAgent, children: cs } = await agentsApart(1);
    const parentId = uid("del-parent");
    // The child cites a parent not stored yet: its chain's link has no agent, nothing above it counts its spend.
    const draft = delegationRecord(parentId, parentAgent, { at: Date.now() - HOUR, scope: { cumulative_maximum: 100 } });
    const child = await childGrant(cs[0] as string, draft, { cumulative_maximum: 100 });
    await recordBareSpend(pool, child, 6000n);
    const parent = await rootGrant(parentAgent, { cumulative_maximum: 100 }, parentId);
    await withTransaction(pool, (c) => upsertDelegation(c, child.record, { orgId: w.operatorOrg }));
    expect(await usd(parent)).toBe("6000");
    expect((await pay(parent, 50)).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });
    expect((await pay(parent, 40)).body).toMatchObject({ verdict: "ALLOW" });
  }, 120_000);

  // Last in this file: it takes the schema down and back up.
  it("upgrades a laid-out cluster across 0540 and every later migration: the ancestors' running totals are backfilled on their own shards, and spends go on", async () => {
    const { parent: p, children: cs } = await agentsApart(2);
    const parent = await rootGrant(p, { cumulative_maximum: 100 });
    const children = [
      await childGrant(cs[0] as string, parent.record, { cumulative_maximum: 100 }),
      await childGrant(cs[1] as string, parent.record, { cumulative_maximum: 100 }),
    ];
    for (const [i, c] of children.entries()) for (let k = 0; k <= i; k++) expect((await pay(c, 7)).body).toMatchObject({ verdict: "ALLOW" });
    // An agent without a chain: its spends run in its shard group's functions on its worker, made by now.
    const { agent_id: plain } = await w.registerAgent(w.operatorKey);
    const lone = await storeAgreement(w, { mandates: [mandate(plain, "i1", { maximum_amount: 100, cumulative_maximum: 1000 })] });
    const payLone = () => w.verify({ agent_id: plain, agreement_id: lone.agreementId, action: action({ amount: 1 }) });
    expect((await payLone()).body).toMatchObject({ verdict: "ALLOW" });
    // Every running total that is not 0 (a total moved away leaves its row at 0; the backfill writes none such).
    const totals = async () =>
      (
        await pool.query<{ a: string; d: string; c: string; s: string }>(
          "SELECT agent_id AS a, delegation_id AS d, currency AS c, spent_minor::text AS s FROM delegation_spend WHERE spent_minor <> 0 ORDER BY 1, 2, 3",
        )
      ).rows;
    const before = await totals();
    expect(before).toContainEqual({ a: parent.agentId, d: parent.delegationId, c: "USD", s: "2100" });

    // Down to the schema before 0540 (every later migration's down too), on the laid-out cluster.
    const later = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith(".sql") && f >= "0540");
    await runner({
      databaseUrl: w.db.url,
      dir: MIGRATIONS_DIR,
      ignorePattern: "(?!.*\\.sql$).*",
      migrationsTable: MIGRATIONS_TABLE,
      direction: "down",
      count: later.length,
      checkOrder: true,
      logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
    expect((await pool.query("SELECT to_regclass('delegation_spend') AS t")).rows[0]?.t).toBeNull();

    // `writ migrate` of the new release: the migrations on distributed tables, then the layout.
    expect(await migrate(w.db.url)).toEqual(later.map((f) => f.replace(/\.sql$/, "")));
    expect(await totals()).toEqual(before);
    const laidOut = await pool.query<{ c: string }>(
      "SELECT colocationid::text AS c FROM pg_dist_partition WHERE logicalrelid IN ('delegation_spend'::regclass, 'delegations'::regclass) GROUP BY 1",
    );
    expect(laidOut.rows).toHaveLength(1);
    expect(await workerOf(parent.agentId, "delegation_spend")).toBe(await workerOf(parent.agentId));

    // The running total is kept from there on: 100 USD in all, 21 spent.
    expect((await pay(children[0] as Grant, 70)).body).toMatchObject({ verdict: "ALLOW" });
    expect((await pay(children[1] as Grant, 10)).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });
    expect((await pay(children[1] as Grant, 9)).body).toMatchObject({ verdict: "ALLOW" });
    expect(await totals()).toContainEqual({ a: parent.agentId, d: parent.delegationId, c: "USD", s: "10000" });
    expect((await payLone()).body).toMatchObject({ verdict: "ALLOW" });
  }, 240_000);
});
