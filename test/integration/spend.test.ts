/**
 * The spend transaction against real Postgres: exact budgets under 200 concurrent spends,
 * idempotency on action_id, later outcomes and their release, delegation budgets across
 * agreements, and the revocation re-checks inside the lock.
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, spentByIntent, verifyLedger, type IntentAgreement, type Mandate } from "../../src/core/agreement/index.js";
import { hashOf } from "../../src/core/canonical/index.js";
import { loadAgreementRecords, loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { revokeAgreement, upsertAgreement } from "../../src/store/agreements.js";
import { revokeDelegation, upsertDelegation } from "../../src/store/delegations.js";
import { createPool, withTransaction } from "../../src/store/pool.js";
import { RecordStoreError } from "../../src/store/record-errors.js";
import { findVerifyDecision } from "../../src/store/verify-decisions.js";
import {
  recordAllowedSpend,
  recordAllowedSpends,
  recordOutcome,
  spendTotals,
  type AllowedSpend,
  type SpendBatchResult,
  type SpendResult,
} from "../../src/store/ledger/index.js";
import { delegation as fixtureDelegation, iso, principalKey, PRINCIPAL, T0 } from "../fixtures/records.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, { max: 20 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const AGENT = "agent-spender";

function mandate(intent: string, over: Partial<Mandate> = {}): Mandate {
  return {
    intent_id: intent,
    principal: { ...PRINCIPAL },
    agent: { agent_id: AGENT },
    currency: "USD",
    maximum_amount: 50,
    cumulative_maximum: 100,
    expires_at: iso(T0 + 86_400_000),
    ...over,
  };
}

async function storeAgreement(id: string, mandates: Mandate[], opts: { delegationId?: string; parentCumulative?: number } = {}): Promise<IntentAgreement> {
  const a = await buildSignedAgreement(
    {
      agreement_id: id,
      mandates,
      ...(opts.parentCumulative !== undefined ? { parent_limits: { currency: "USD", maximum_amount: 50, cumulative_maximum: opts.parentCumulative } } : {}),
      at: iso(T0),
    },
    principalKey,
  );
  await withTransaction(pool, (c) => upsertAgreement(c, a, { ...(opts.delegationId ? { delegationId: opts.delegationId } : {}), orgId: "org_test" }));
  return a;
}

const spend = (agreementId: string, actionId: string, amountMinor: bigint, over: Partial<AllowedSpend> = {}): AllowedSpend => ({
  agreementId,
  intentId: "i1",
  actionId,
  amountMinor,
  currency: "USD",
  at: iso(T0 + 1000),
  ...over,
});

async function ledgerOf(id: string): Promise<IntentAgreement> {
  const a = await loadAgreementWithLedger(pool, id);
  if (!a) throw new Error(`agreement ${id} is not stored`);
  return a;
}

describe("recordAllowedSpend", () => {
  it("records exactly as many of 200 concurrent spends as the cumulative slice allows, on one verified chain", async () => {
    await storeAgreement("agr-race", [mandate("i1")]);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => recordAllowedSpend(pool, spend("agr-race", `race-${i}`, 1000n, { limits: { sliceMinor: 10_000n } }))),
    );
    const recorded = results.filter((r): r is Extract<SpendResult, { recorded: true }> => r.recorded);
    expect(recorded).toHaveLength(10);
    expect(recorded.every((r) => !r.replayed)).toBe(true);
    const refused = results.filter((r) => !r.recorded);
    expect(new Set(refused.map((r) => (r.recorded ? "" : r.reason)))).toEqual(new Set(["CUMULATIVE_BUDGET_EXCEEDED"]));

    const a = await ledgerOf("agr-race");
    expect(verifyLedger(a)).toEqual({ state: "ok" });
    expect(a.ledger?.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(a.ledger?.map((e) => e.entry_hash).sort()).toEqual(recorded.map((r) => r.entry.entry_hash).sort());
    expect(spentByIntent(a).get("i1")).toBe(10_000n);
    expect((await spendTotals(pool, "agr-race")).get("i1")).toBe(10_000n);
  });

  it("also holds the parent cumulative maximum across intents", async () => {
    await storeAgreement("agr-parent", [mandate("i1", { cumulative_maximum: 60 }), mandate("i2", { cumulative_maximum: 60 })], { parentCumulative: 100 });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const intentId = i % 2 === 0 ? "i1" : "i2";
        return recordAllowedSpend(pool, spend("agr-parent", `p-${i}`, 1000n, { intentId, limits: { sliceMinor: 6000n, parentCumulativeMinor: 10_000n } }));
      }),
    );
    expect(results.filter((r) => r.recorded)).toHaveLength(10);
    const a = await ledgerOf("agr-parent");
    expect(verifyLedger(a)).toEqual({ state: "ok" });
    const spent = spentByIntent(a);
    expect((spent.get("i1") ?? 0n) + (spent.get("i2") ?? 0n)).toBe(10_000n);
    expect(await spendTotals(pool, "agr-parent")).toEqual(spent);
  });

  it("is idempotent on action_id: 50 concurrent retries spend once and all get the same entry", async () => {
    await storeAgreement("agr-idem", [mandate("i1")]);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => recordAllowedSpend(pool, spend("agr-idem", "same-action", 2500n, { limits: { sliceMinor: 10_000n } }))),
    );
    const recorded = results.filter((r): r is Extract<SpendResult, { recorded: true }> => r.recorded);
    expect(recorded).toHaveLength(50);
    expect(recorded.filter((r) => !r.replayed)).toHaveLength(1);
    expect(new Set(recorded.map((r) => r.entry.entry_hash)).size).toBe(1);
    const a = await ledgerOf("agr-idem");
    expect(a.ledger).toHaveLength(1);
    expect(a.ledger?.[0]).toEqual(recorded[0]?.entry);
    expect(a.ledger?.[0]).toMatchObject({
      action_id: "same-action",
      outcome: "allowed",
      amount: 25,
      currency: "USD",
      intent_id: "i1",
      idempotency_key: "same-action",
    });
    expect((await spendTotals(pool, "agr-idem")).get("i1")).toBe(2500n);
  });

  it("holds a delegation's cumulative maximum across its agreements", async () => {
    const d = fixtureDelegation(undefined, {
      delegation_id: "del-budget",
      agent: { agent_id: AGENT },
      delegation_chain: [],
      scope: { currency: "USD", maximum_amount: 50, cumulative_maximum: 50 },
    });
    await withTransaction(pool, (c) => upsertDelegation(c, d));
    await storeAgreement("agr-d1", [mandate("i1")], { delegationId: "del-budget" });
    await storeAgreement("agr-d2", [mandate("i1")], { delegationId: "del-budget" });
    const limits = { sliceMinor: 10_000n, delegation: { delegationId: "del-budget", cumulativeMinor: 5000n, currency: "USD" } };
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => recordAllowedSpend(pool, spend(i % 2 ? "agr-d1" : "agr-d2", `d-${i}`, 500n, { limits }))),
    );
    expect(results.filter((r) => r.recorded)).toHaveLength(10);
    expect(new Set(results.flatMap((r) => (r.recorded ? [] : [r.reason])))).toEqual(new Set(["DELEGATION_BUDGET_EXCEEDED"]));
    const [a1, a2] = await Promise.all([ledgerOf("agr-d1"), ledgerOf("agr-d2")]);
    expect(verifyLedger(a1)).toEqual({ state: "ok" });
    expect(verifyLedger(a2)).toEqual({ state: "ok" });
    expect((spentByIntent(a1).get("i1") ?? 0n) + (spentByIntent(a2).get("i1") ?? 0n)).toBe(5000n);
  });

  it("re-checks revocations inside the lock, but still answers a retry of a recorded action", async () => {
    await storeAgreement("agr-rev", [mandate("i1")]);
    const first = await recordAllowedSpend(pool, spend("agr-rev", "before", 100n));
    expect(first.recorded).toBe(true);
    await withTransaction(pool, (c) => revokeAgreement(c, AGENT, "agr-rev", { reason: "test", by: "principal", at: new Date(T0) }));
    expect(await recordAllowedSpend(pool, spend("agr-rev", "after", 100n))).toMatchObject({ recorded: false, reason: "AGREEMENT_REVOKED" });
    expect(await recordAllowedSpend(pool, spend("agr-rev", "before", 100n))).toMatchObject({ recorded: true, replayed: true });

    await storeAgreement("agr-pushed", [mandate("i1")]);
    await pool.query(
      "INSERT INTO revocations (sequence, revocation_id, agreement_id, mandate_hash, revocation, pushed_at, agent_id) VALUES (1, $1, 'agr-pushed', $2, '{}', $3, $4)",
      [hashOf("r"), hashOf("m"), iso(T0), AGENT],
    );
    expect(await recordAllowedSpend(pool, spend("agr-pushed", "x", 100n))).toMatchObject({ recorded: false, reason: "AGREEMENT_REVOKED" });

    const d = fixtureDelegation(undefined, { delegation_id: "del-rev", agent: { agent_id: AGENT }, delegation_chain: [] });
    await withTransaction(pool, (c) => upsertDelegation(c, d));
    await storeAgreement("agr-drev", [mandate("i1")], { delegationId: "del-rev" });
    await withTransaction(pool, (c) => revokeDelegation(c, null, "del-rev", { reason: "test", by: "principal", at: new Date(T0) }));
    expect(await recordAllowedSpend(pool, spend("agr-drev", "y", 100n))).toMatchObject({ recorded: false, reason: "DELEGATION_REVOKED" });
  });

  it("refuses unknown agreements and intents, and throws on malformed requests", async () => {
    await storeAgreement("agr-bad", [mandate("i1")]);
    expect(await recordAllowedSpend(pool, spend("agr-none", "a", 100n))).toMatchObject({ recorded: false, reason: "NO_ACTIVE_AGREEMENT" });
    expect(await recordAllowedSpend(pool, spend("agr-bad", "a", 100n, { intentId: "nope" }))).toMatchObject({ recorded: false, reason: "INTENT_NOT_FOUND" });
    await expect(recordAllowedSpend(pool, spend("agr-bad", "a", 100n, { currency: "EUR" }))).rejects.toMatchObject({ code: "SPEND_INVALID" });
    await expect(recordAllowedSpend(pool, spend("agr-bad", "a", -1n))).rejects.toBeInstanceOf(RecordStoreError);
    await expect(recordAllowedSpend(pool, spend("agr-bad", "a", 100n, { at: "yesterday" }))).rejects.toMatchObject({ code: "SPEND_INVALID" });
    await expect(recordAllowedSpend(pool, spend("agr-bad", "a", 2n ** 60n))).rejects.toMatchObject({ code: "SPEND_INVALID" });
    expect((await ledgerOf("agr-bad")).ledger).toEqual([]);
  });

  it("takes the spend's currency as its intent's only while the revision it names is the stored one", async () => {
    await storeAgreement("agr-pin", [mandate("i1")]);
    const revisionOf = async () => (await loadAgreementRecords(pool, ["agr-pin"]))[0]?.revision as number;
    const first = await revisionOf();
    expect(await recordAllowedSpend(pool, spend("agr-pin", "p1", 100n, { revision: first }))).toMatchObject({ recorded: true });
    // A new revision moves intent i1 to EUR: a spend decided on the first is checked against the stored record.
    await storeAgreement("agr-pin", [mandate("i1", { currency: "EUR" })]);
    expect(await revisionOf()).toBeGreaterThan(first);
    await expect(recordAllowedSpend(pool, spend("agr-pin", "p2", 100n, { revision: first }))).rejects.toThrow("intent i1 is in EUR, the spend in USD");
    // And one without intent i1.
    await storeAgreement("agr-pin", [mandate("i2", { currency: "EUR" })]);
    expect(await recordAllowedSpend(pool, spend("agr-pin", "p3", 100n, { revision: first }))).toMatchObject({ recorded: false, reason: "INTENT_NOT_FOUND" });
    // The stored revision named: its intent's currency is the spend's.
    expect(await recordAllowedSpend(pool, spend("agr-pin", "p4", 100n, { intentId: "i2", currency: "EUR", revision: await revisionOf() }))).toMatchObject({
      recorded: true,
    });
    await expect(recordAllowedSpend(pool, spend("agr-pin", "p5", 100n, { revision: 0 }))).rejects.toMatchObject({ code: "SPEND_INVALID" });
    expect((await ledgerOf("agr-pin")).ledger?.map((e) => e.action_id)).toEqual(["p1", "p4"]);
  });

  it("refuses a delegation's spend in another currency than its budget's, and counts only its own currency", async () => {
    const d = fixtureDelegation(undefined, { delegation_id: "del-mixed", agent: { agent_id: AGENT }, delegation_chain: [], scope: { currency: "USD" } });
    await withTransaction(pool, (c) => upsertDelegation(c, d));
    await storeAgreement("agr-m-usd", [mandate("i1")], { delegationId: "del-mixed" });
    await storeAgreement("agr-m-eur", [mandate("i1", { currency: "EUR" })], { delegationId: "del-mixed" });
    const limits = (cumulativeMinor: bigint) => ({ sliceMinor: 10_000n, delegation: { delegationId: "del-mixed", cumulativeMinor, currency: "USD" } });
    expect(await recordAllowedSpend(pool, spend("agr-m-usd", "m1", 3000n, { limits: limits(5000n) }))).toMatchObject({
      recorded: true,
      delegationSpentMinor: 3000n,
    });
    expect(await recordAllowedSpend(pool, spend("agr-m-usd", "m2", 3000n, { limits: limits(5000n) }))).toMatchObject({
      recorded: false,
      reason: "DELEGATION_BUDGET_EXCEEDED",
    });
    // Spend under the delegation in EUR (no delegation budget on that spend): the USD budget can no longer be added up.
    expect(await recordAllowedSpend(pool, spend("agr-m-eur", "m3", 100n, { currency: "EUR" }))).toMatchObject({ recorded: true });
    const mixed = await recordAllowedSpend(pool, spend("agr-m-usd", "m4", 100n, { limits: limits(50_000n) }));
    expect(mixed).toMatchObject({ recorded: false, reason: "DELEGATION_BUDGET_EXCEEDED" });
    expect(mixed.recorded === false && mixed.message).toContain("other currencies than USD");
  });

  it("stores the verify decision in the same transaction as the spend, and only then", async () => {
    await storeAgreement("agr-dec", [mandate("i1")]);
    const body = { verdict: "ALLOW", svc_decision: "ALLOW", reasons: [], agent_id: AGENT, agreement_id: "agr-dec" };
    const decision = { agentId: AGENT, requestHash: hashOf({ n: 1 }), body };
    const ok = await recordAllowedSpend(pool, spend("agr-dec", "dec-1", 100n, { decision }));
    expect(ok.recorded).toBe(true);
    expect(await findVerifyDecision(pool, AGENT, "dec-1")).toMatchObject({ agreementId: "agr-dec", requestHash: decision.requestHash, decision: body });
    const no = await recordAllowedSpend(pool, spend("agr-dec", "dec-2", 20_000n, { limits: { sliceMinor: 10_000n }, decision }));
    expect(no.recorded).toBe(false);
    expect(await findVerifyDecision(pool, AGENT, "dec-2")).toBeUndefined();
  });

  it("records a batch in one transaction: spends on one agreement chained in order, a budget taken earlier in the batch refused, a malformed spend failed alone", async () => {
    await storeAgreement("agr-b1", [mandate("i1")]);
    await storeAgreement("agr-b2", [mandate("i1")]);
    const limits = { sliceMinor: 10_000n };
    expect((await recordAllowedSpend(pool, spend("agr-b1", "b-before", 6000n, { limits }))).recorded).toBe(true);
    const results = await recordAllowedSpends(pool, [
      spend("agr-b1", "b-1", 2000n, { limits }),
      spend("agr-b2", "b-x", 500n, { limits }),
      spend("agr-b1", "b-2", 3000n, { limits }), // 6000 + 2000 + 3000 > 10000: refused
      spend("agr-b1", "b-3", 2000n, { limits }), // exactly 10000
      spend("agr-b1", "b-1", 2000n, { limits }), // the same action again: its entry of this batch
      spend("agr-b2", "b-bad", 100n, { currency: "EUR" }), // the intent is in USD: SPEND_INVALID, alone
      spend("agr-b1", "b-before", 6000n, { limits }), // recorded before: replayed
    ]);
    const [b1, bx, b2, b3, again, bad, before] = results as SpendBatchResult[];
    expect(b1).toMatchObject({ recorded: true, replayed: false, entry: { sequence: 2, action_id: "b-1" }, intentSpentMinor: 8000n });
    expect(bx).toMatchObject({ recorded: true, replayed: false, entry: { sequence: 1, action_id: "b-x" }, intentSpentMinor: 500n });
    expect(b2).toMatchObject({ recorded: false, reason: "CUMULATIVE_BUDGET_EXCEEDED" });
    expect((b2 as { message: string }).message).toContain("on top of 80.00 USD spent under intent i1");
    expect(b3).toMatchObject({ recorded: true, replayed: false, entry: { sequence: 3, action_id: "b-3" }, intentSpentMinor: 10_000n });
    const e1 = (b1 as Extract<SpendResult, { recorded: true }>).entry;
    expect((b3 as Extract<SpendResult, { recorded: true }>).entry.prev_entry_hash).toBe(e1.entry_hash);
    expect(again).toEqual({ recorded: true, replayed: true, entry: e1 });
    expect(bad).toMatchObject({ failed: { code: "SPEND_INVALID" } });
    expect(before).toMatchObject({ recorded: true, replayed: true, entry: { sequence: 1, action_id: "b-before" } });

    const a = await ledgerOf("agr-b1");
    expect(verifyLedger(a)).toEqual({ state: "ok" });
    expect((a.ledger ?? []).map((e) => e.action_id)).toEqual(["b-before", "b-1", "b-3"]);
    expect(spentByIntent(a).get("i1")).toBe(10_000n);
    expect((await spendTotals(pool, "agr-b1")).get("i1")).toBe(10_000n);
    expect((await spendTotals(pool, "agr-b2")).get("i1")).toBe(500n);
    // One transaction wrote the batch's three entries (one xmin); the one before it, another.
    const { rows } = await pool.query<{ action_id: string; tx: string }>(
      "SELECT action_id, xmin::text AS tx FROM ledger_entries WHERE agreement_id IN ('agr-b1', 'agr-b2')",
    );
    const tx = new Map(rows.map((r) => [r.action_id, r.tx]));
    expect(new Set(["b-1", "b-3", "b-x"].map((x) => tx.get(x))).size).toBe(1);
    expect(tx.get("b-before")).not.toBe(tx.get("b-1"));
  });

  it("carries ids and answers with quotes, backslashes and dollar-quote tags through unchanged", async () => {
    await storeAgreement("agr-q'$w$", [mandate("i1")]);
    const actionId = String.raw`q-'"\$w$$w0$`;
    const decision = { agentId: AGENT, requestHash: hashOf({ q: 1 }), body: { verdict: "ALLOW", note: String.raw`$w$ ' " \ é` } };
    const [r] = await recordAllowedSpends(pool, [spend("agr-q'$w$", actionId, 100n, { decision })]);
    expect(r).toMatchObject({ recorded: true, entry: { action_id: actionId }, decisionStored: true });
    expect((await ledgerOf("agr-q'$w$")).ledger?.[0]?.action_id).toBe(actionId);
    expect((await findVerifyDecision(pool, AGENT, actionId))?.decision).toEqual(decision.body);
  });

  it("stores one answer per (agent, action) in a batch: a second spend of the action answered before in the batch is ACTION_DECIDED", async () => {
    await storeAgreement("agr-bd1", [mandate("i1")]);
    await storeAgreement("agr-bd2", [mandate("i1")]);
    const decision = { agentId: AGENT, requestHash: hashOf({ n: 1 }), body: { verdict: "ALLOW" } };
    const [first, second] = await recordAllowedSpends(pool, [spend("agr-bd1", "bd-1", 100n, { decision }), spend("agr-bd2", "bd-1", 100n, { decision })]);
    expect(first).toMatchObject({ recorded: true, replayed: false, decisionStored: true });
    expect(second).toMatchObject({ recorded: false, reason: "ACTION_DECIDED" });
    expect((await findVerifyDecision(pool, AGENT, "bd-1"))?.agreementId).toBe("agr-bd1");
    expect((await ledgerOf("agr-bd2")).ledger ?? []).toEqual([]);
  });

  it("replays an action's entry only for the same request: its request hash, else its amount and intent; another is ACTION_REUSED and spends nothing", async () => {
    await storeAgreement("agr-reuse", [mandate("i1"), mandate("i2")]);
    const body = { verdict: "ALLOW" };
    const asked = (n: number) => ({ agentId: AGENT, requestHash: hashOf({ n }), body });
    const first = await recordAllowedSpend(pool, spend("agr-reuse", "r-1", 100n, { decision: asked(1) }));
    expect(first).toMatchObject({ recorded: true, replayed: false });
    // Its answer pruned (retention): the ledger entry still knows the request.
    await pool.query("DELETE FROM verify_decisions WHERE agent_id = $1 AND action_id = 'r-1'", [AGENT]);
    expect(await recordAllowedSpend(pool, spend("agr-reuse", "r-1", 100n, { decision: asked(1) }))).toMatchObject({ recorded: true, replayed: true });
    expect(await recordAllowedSpend(pool, spend("agr-reuse", "r-1", 100n, { decision: asked(2) }))).toMatchObject({ recorded: false, reason: "ACTION_REUSED" });
    // Without a hash on one side: amount and intent.
    expect(await recordAllowedSpend(pool, spend("agr-reuse", "r-1", 100n))).toMatchObject({ recorded: true, replayed: true });
    expect(await recordAllowedSpend(pool, spend("agr-reuse", "r-1", 900n))).toMatchObject({ recorded: false, reason: "ACTION_REUSED" });
    expect(await recordAllowedSpend(pool, spend("agr-reuse", "r-1", 100n, { intentId: "i2" }))).toMatchObject({ recorded: false, reason: "ACTION_REUSED" });
    // In one batch, as against the stored entry.
    const [a, b] = await recordAllowedSpends(pool, [
      spend("agr-reuse", "r-2", 100n, { decision: asked(3) }),
      spend("agr-reuse", "r-2", 100n, { decision: asked(4) }),
    ]);
    expect(a).toMatchObject({ recorded: true, replayed: false });
    expect(b).toMatchObject({ recorded: false, reason: "ACTION_REUSED" });
    expect((await ledgerOf("agr-reuse")).ledger?.map((e) => e.action_id)).toEqual(["r-1", "r-2"]);
    expect(await spendTotals(pool, "agr-reuse")).toEqual(new Map([["i1", 200n]]));
  });

  it("reports the transaction's duration to observe", async () => {
    await storeAgreement("agr-obs", [mandate("i1")]);
    const seen: number[] = [];
    await recordAllowedSpend(pool, spend("agr-obs", "o-1", 100n), { observe: (s) => seen.push(s) });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeGreaterThan(0);
    expect(seen[0]).toBeLessThan(5);
  });
});

describe("recordOutcome", () => {
  it("follows allowed -> authorized -> settled, replays repeats and refuses other moves", async () => {
    await storeAgreement("agr-out", [mandate("i1")]);
    await recordAllowedSpend(pool, spend("agr-out", "pay-1", 1500n));
    expect(await recordOutcome(pool, { agreementId: "agr-out", actionId: "pay-1", outcome: "settled", at: iso(T0 + 2000) })).toEqual({
      recorded: false,
      code: "OUTCOME_NOT_ALLOWED",
      current: "allowed",
    });
    const auth = await recordOutcome(pool, { agreementId: "agr-out", actionId: "pay-1", outcome: "authorized", at: iso(T0 + 2000) });
    expect(auth).toMatchObject({ recorded: true, replayed: false, entry: { outcome: "authorized", amount: 15, intent_id: "i1", sequence: 2 } });
    expect(await recordOutcome(pool, { agreementId: "agr-out", actionId: "pay-1", outcome: "authorized", at: iso(T0 + 3000) })).toMatchObject({
      recorded: true,
      replayed: true,
      entry: auth.recorded ? auth.entry : {},
    });
    expect(await recordOutcome(pool, { agreementId: "agr-out", actionId: "pay-1", outcome: "settled", at: iso(T0 + 4000) })).toMatchObject({
      recorded: true,
      replayed: false,
    });
    expect(await recordOutcome(pool, { agreementId: "agr-out", actionId: "pay-1", outcome: "failed", at: iso(T0 + 5000) })).toEqual({
      recorded: false,
      code: "OUTCOME_NOT_ALLOWED",
      current: "settled",
    });
    expect(await recordOutcome(pool, { agreementId: "agr-out", actionId: "nope", outcome: "failed", at: iso(T0) })).toEqual({
      recorded: false,
      code: "ACTION_NOT_RECORDED",
    });
    expect(await recordOutcome(pool, { agreementId: "agr-none", actionId: "pay-1", outcome: "failed", at: iso(T0) })).toEqual({
      recorded: false,
      code: "AGREEMENT_NOT_FOUND",
    });
    const a = await ledgerOf("agr-out");
    expect(verifyLedger(a)).toEqual({ state: "ok" });
    expect(a.ledger?.map((e) => e.outcome)).toEqual(["allowed", "authorized", "settled"]);
    expect(spentByIntent(a).get("i1")).toBe(1500n);
    expect((await spendTotals(pool, "agr-out")).get("i1")).toBe(1500n);
  });

  it("releases the amount on failed (from allowed or authorized), which frees budget; settled after failed is refused", async () => {
    await storeAgreement("agr-fail", [mandate("i1")]);
    const limits = { sliceMinor: 5000n };
    expect((await recordAllowedSpend(pool, spend("agr-fail", "f-1", 3000n, { limits }))).recorded).toBe(true);
    expect((await recordAllowedSpend(pool, spend("agr-fail", "f-2", 2000n, { limits }))).recorded).toBe(true);
    expect(await recordAllowedSpend(pool, spend("agr-fail", "f-3", 1000n, { limits }))).toMatchObject({
      recorded: false,
      reason: "CUMULATIVE_BUDGET_EXCEEDED",
    });
    await recordOutcome(pool, { agreementId: "agr-fail", actionId: "f-2", outcome: "authorized", at: iso(T0 + 2000) });
    expect(await recordOutcome(pool, { agreementId: "agr-fail", actionId: "f-1", outcome: "failed", at: iso(T0 + 2000) })).toMatchObject({ recorded: true });
    expect(await recordOutcome(pool, { agreementId: "agr-fail", actionId: "f-2", outcome: "failed", at: iso(T0 + 3000) })).toMatchObject({ recorded: true });
    expect(await recordOutcome(pool, { agreementId: "agr-fail", actionId: "f-1", outcome: "settled", at: iso(T0 + 4000) })).toEqual({
      recorded: false,
      code: "OUTCOME_NOT_ALLOWED",
      current: "failed",
    });
    expect((await spendTotals(pool, "agr-fail")).get("i1")).toBe(0n);
    expect((await recordAllowedSpend(pool, spend("agr-fail", "f-3", 5000n, { limits }))).recorded).toBe(true);
    const a = await ledgerOf("agr-fail");
    expect(verifyLedger(a)).toEqual({ state: "ok" });
    expect(spentByIntent(a).get("i1")).toBe(5000n);
    expect((await spendTotals(pool, "agr-fail")).get("i1")).toBe(5000n);
  });

  it("appends outcomes and spends racing on one agreement to one chain: each reads the head after its lock", async () => {
    await storeAgreement("agr-race-out", [mandate("i1", { maximum_amount: 1000, cumulative_maximum: 1_000_000 })]);
    for (let i = 0; i < 20; i++) expect((await recordAllowedSpend(pool, spend("agr-race-out", `first-${i}`, 100n))).recorded).toBe(true);
    // 20 outcomes (each a new entry) and 40 spends at once, in batches and alone.
    const outcomes = Array.from({ length: 20 }, (_, i) =>
      recordOutcome(pool, { agreementId: "agr-race-out", actionId: `first-${i}`, outcome: i % 2 ? "failed" : "authorized", at: iso(T0 + 2000) }),
    );
    const alone = Array.from({ length: 20 }, (_, i) => recordAllowedSpend(pool, spend("agr-race-out", `alone-${i}`, 100n)));
    const batches = Array.from({ length: 4 }, (_, b) =>
      recordAllowedSpends(
        pool,
        Array.from({ length: 5 }, (_, i) => spend("agr-race-out", `batch-${b}-${i}`, 100n)),
      ),
    );
    const [o, a, bs] = await Promise.all([Promise.all(outcomes), Promise.all(alone), Promise.all(batches)]);
    expect(o.every((r) => r.recorded && !r.replayed)).toBe(true);
    expect(a.every((r) => r.recorded)).toBe(true);
    expect(bs.flat().every((r) => "recorded" in r && r.recorded)).toBe(true);
    const ledger = await ledgerOf("agr-race-out");
    expect(verifyLedger(ledger)).toEqual({ state: "ok" });
    expect(ledger.ledger).toHaveLength(80);
    expect(ledger.ledger_sequence).toBe(80);
    // 60 allowed of 100 minor units, 10 released by failed.
    expect((await spendTotals(pool, "agr-race-out")).get("i1")).toBe(5000n);
  });
});
