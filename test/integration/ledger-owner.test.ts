/**
 * The service is the system of record for ledgers (docs/threat-model/ledger.md), over real HTTP
 * and Postgres:
 * - issue 27, hole 1: a ledger declared with an agreement record (what the IntentAgreement and
 *   Delegation reconcilers and local manifests store, through `upsertAgreement`) never adds,
 *   changes or releases an entry of a stored agreement's ledger; into an agreement the service
 *   never held it is imported at face value, its action_ids spent;
 * - issue 27, hole 2: a repeated action_id is answered from the ledger only for the same
 *   request, also after retention pruned its verify decision.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, spentByIntent, verifyLedger, withLedgerEntry, type IntentAgreement } from "../../src/core/agreement/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { spendTotals } from "../../src/store/ledger/index.js";
import { withTransaction } from "../../src/store/pool.js";
import { pruneOnce } from "../../src/store/retention.js";
import { principalKey } from "../fixtures/records.js";
import { acknowledgedBy, action, HOUR, iso, mandate, startVerifyWorld, storeAgreement, uid, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

async function ledgerOf(id: string): Promise<IntentAgreement> {
  const a = await loadAgreementWithLedger(w.db.pool, id);
  if (!a) throw new Error(`agreement ${id} is not stored`);
  return a;
}

/** Drops this process's cached view of the agent, so the next verify reads what Postgres holds (as another process would). */
function fresh(agentId: string): void {
  w.server.app.verifyRuntime?.candidates.forget(agentId);
}

/** A new agent with an agreement of 100 USD per action and 100 USD in all, stored bare (as the agreement reconciler stores it). */
async function budgetOf100(): Promise<{ agent_id: string; agreementId: string }> {
  const { agent_id } = await w.registerAgent(w.operatorKey);
  const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 100, cumulative_maximum: 100 })], delegation: false });
  return { agent_id, agreementId };
}

/** Re-applies `a` (a declaration carrying a ledger) as the reconcilers do. */
const apply = (a: IntentAgreement, agentId: string) => withTransaction(w.db.pool, (c) => upsertAgreement(c, a, { orgId: w.operatorOrg, agentId }));

describe("hole 1: a declaration's ledger is not the service's", () => {
  it("a declared `failed` entry for an ALLOWed action releases nothing: a second 100 on a budget of 100 is refused", async () => {
    const { agent_id, agreementId } = await budgetOf100();
    const first = action({ amount: 100 });
    expect((await w.verify({ agent_id, action: first })).body.verdict).toBe("ALLOW");

    const stored = await ledgerOf(agreementId);
    const forged = withLedgerEntry(stored, {
      action_id: first.action_id as string,
      at: iso(Date.now()),
      currency: "USD",
      outcome: "failed",
      amount: 100,
      intent_id: "i1",
      idempotency_key: first.action_id as string,
    }).agreement;
    expect(verifyLedger(forged)).toEqual({ state: "ok" });
    const up = await apply(forged, agent_id);

    fresh(agent_id);
    const second = await w.verify({ agent_id, action: action({ amount: 100 }) });
    expect(second.body).toMatchObject({ verdict: "DENY", reasons: ["CUMULATIVE_BUDGET_EXCEEDED"] });
    expect((await spendTotals(w.db.pool, agreementId)).get("i1")).toBe(10_000n);
    expect((await ledgerOf(agreementId)).ledger).toEqual(stored.ledger);
    expect(up).toMatchObject({ ledgerAppended: 0, ledgerSequence: 1 });
    expect(up.ledgerIgnored).toContain("the declared ledger (2 entries) was ignored");
  });

  it("declared `allowed` entries of 0 for unused action ids are never matched by a later verify: one ALLOW of 100 on a budget of 100", async () => {
    const { agent_id, agreementId } = await budgetOf100();
    const ids = [uid("act"), uid("act"), uid("act"), uid("act")];
    let declared = await ledgerOf(agreementId);
    for (const id of ids)
      declared = withLedgerEntry(declared, {
        action_id: id,
        at: iso(Date.now()),
        currency: "USD",
        outcome: "allowed",
        amount: 0,
        intent_id: "i1",
        idempotency_key: id,
      }).agreement;
    const up = await apply(declared, agent_id);

    fresh(agent_id);
    const verdicts: string[] = [];
    for (const id of ids) verdicts.push((await w.verify({ agent_id, action: action({ action_id: id, amount: 100 }) })).body.verdict as string);
    expect(verdicts).toEqual(["ALLOW", "DENY", "DENY", "DENY"]);
    const after = await ledgerOf(agreementId);
    expect(after.ledger?.map((e) => [e.action_id, e.amount])).toEqual([[ids[0], 100]]);
    expect((await spendTotals(w.db.pool, agreementId)).get("i1")).toBe(10_000n);
    expect(up.ledgerIgnored).toContain("longer than the stored ledger");
  });

  it("a ledger that arrives with the record creating the agreement is imported at face value: a failed in it releases nothing, its action ids are spent", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const agreementId = uid("agr");
    const signed = await buildSignedAgreement(
      { agreement_id: agreementId, mandates: [mandate(agent_id, "i1", { maximum_amount: 100, cumulative_maximum: 100 })], at: iso(Date.now() - HOUR) },
      principalKey,
    );
    let a = await acknowledgedBy(signed, [w.psp], iso(Date.now() - HOUR));
    a = { ...a, ledger: [], ledger_sequence: 0 };
    const [paid, zero] = [uid("act"), uid("act")];
    a = withLedgerEntry(a, { action_id: paid, at: iso(Date.now() - HOUR), currency: "USD", outcome: "allowed", amount: 40, intent_id: "i1" }).agreement;
    a = withLedgerEntry(a, { action_id: paid, at: iso(Date.now() - HOUR), currency: "USD", outcome: "failed", intent_id: "i1" }).agreement;
    a = withLedgerEntry(a, { action_id: zero, at: iso(Date.now() - HOUR), currency: "USD", outcome: "allowed", amount: 0, intent_id: "i1" }).agreement;
    expect(spentByIntent(a).get("i1")).toBe(0n);
    expect(await apply(a, agent_id)).toMatchObject({ created: true, ledgerAppended: 3, ledgerSequence: 3 });
    expect((await ledgerOf(agreementId)).ledger).toEqual(a.ledger);
    // Face value: the released 40 still counts.
    expect((await spendTotals(w.db.pool, agreementId)).get("i1")).toBe(4000n);

    // An imported action id is spent: never an ALLOW pointing at the imported entry, whatever the amount.
    for (const amount of [0, 50]) {
      const r = await w.verify({ agent_id, action: action({ action_id: zero, amount }) });
      expect(r).toMatchObject({ status: 409, body: { error: expect.stringContaining("already used") } });
    }
    // Nor does an outcome move an imported action (a failed would release its face value).
    expect((await w.outcome({ agreement_id: agreementId, action_id: zero, outcome: "failed" })).status).toBe(404);
    expect((await w.verify({ agent_id, action: action({ amount: 60 }) })).body.verdict).toBe("ALLOW");
    expect((await w.verify({ agent_id, action: action({ amount: 1 }) })).body.reasons).toEqual(["CUMULATIVE_BUDGET_EXCEEDED"]);
    expect((await spendTotals(w.db.pool, agreementId)).get("i1")).toBe(10_000n);

    // Re-applied with the same ledger: nothing to say, nothing written.
    const again = await apply(a, agent_id);
    expect(again).toMatchObject({ created: false, ledgerAppended: 0, ledgerSequence: 4 });
    expect(again.ledgerIgnored).toBeUndefined();
  });
});

describe("hole 2: a replay is matched by the request, not by action_id alone", () => {
  /** Ages the agent's verify decisions past a one-day retention and prunes them (the retention worker's pass). */
  async function pruneDecisions(agentId: string): Promise<void> {
    await w.db.pool.query("UPDATE verify_decisions SET created_at = now() - interval '2 days' WHERE agent_id = $1", [agentId]);
    await pruneOnce(w.db.pool, { decisionDays: 1, webhookDays: 30 });
    const { rows } = await w.db.pool.query("SELECT 1 FROM verify_decisions WHERE agent_id = $1", [agentId]);
    expect(rows).toEqual([]);
  }

  it("after retention pruned the decision, a retry of an ALLOWed action_id with another amount is a 409, the same request its ALLOW, and totals do not move", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 100, cumulative_maximum: 1000 })] });
    const first = action({ amount: 10, merchant: "m-1" });
    const allowed = await w.verify({ agent_id, action: first });
    expect(allowed.body.verdict).toBe("ALLOW");
    await pruneDecisions(agent_id);

    for (const changed of [{ amount: 90 }, { amount: 1 }, { merchant: "m-2" }]) {
      const r = await w.verify({ agent_id, action: { ...first, ...changed } });
      expect(r).toMatchObject({
        status: 409,
        body: { error: `action_id ${first.action_id as string} was already used by a different request of agent ${agent_id}` },
      });
    }
    const same = await w.verify({ agent_id, action: first });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(allowed.body);
    const ledger = (await ledgerOf(agreementId)).ledger ?? [];
    expect(ledger.map((e) => [e.action_id, e.amount])).toEqual([[first.action_id, 10]]);
    expect((await spendTotals(w.db.pool, agreementId)).get("i1")).toBe(1000n);
  });

  it("inside the window too, the spend transaction refuses another request for the action (the ledger's request hash), without a stored decision to read", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    const first = action();
    expect((await w.verify({ agent_id, action: first })).body.verdict).toBe("ALLOW");
    const { rows } = await w.db.pool.query<{ request_hash: string }>("SELECT request_hash FROM ledger_entries WHERE agreement_id = $1", [agreementId]);
    const { rows: decided } = await w.db.pool.query<{ request_hash: string }>("SELECT request_hash FROM verify_decisions WHERE agent_id = $1", [agent_id]);
    expect(rows).toEqual(decided);
    expect((await w.verify({ agent_id, action: { ...first, amount: 11 } })).status).toBe(409);
    expect((await spendTotals(w.db.pool, agreementId)).get("i1")).toBe(1000n);
  });
});
