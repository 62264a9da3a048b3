/**
 * Holds, captures, voids, expiries and refunds over real HTTP (POST /v1/verify/outcomes, the
 * expiry sweep): every step in the hash-chained ledger, the budget given back exactly, the
 * grant's choice on refunds, idempotent steps, who may record them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyLedger } from "../../src/core/agreement/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { expireHolds, spendTotals } from "../../src/store/ledger/index.js";
import { startHoldExpiry } from "../../src/retention/hold-expiry.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

/** A new agent with one agreement (cumulative `cumulative` USD) and one ALLOW of `amount`. */
async function held(amount: number, cumulative: number, over: Record<string, unknown> = {}, scope: Record<string, unknown> = {}) {
  const { agent_id } = await w.registerAgent(w.operatorKey);
  const { agreementId } = await storeAgreement(w, {
    mandates: [mandate(agent_id, "i1", { cumulative_maximum: cumulative, ...over })],
    delegation: { scope: { currency: "USD", ...scope } },
  });
  const act = action({ amount });
  expect((await w.verify({ agent_id, action: act })).body.verdict).toBe("ALLOW");
  return { agent_id, agreementId, base: { agreement_id: agreementId, action_id: act.action_id as string } };
}

const spent = async (agreementId: string) => (await spendTotals(w.db.pool, agreementId)).get("i1");
async function ledgerOf(agreementId: string) {
  const a = await loadAgreementWithLedger(w.db.pool, agreementId);
  expect(a && verifyLedger(a)).toEqual({ state: "ok" });
  return a?.ledger ?? [];
}

describe("holds and captures", () => {
  it("partial captures up to the hold; the final one releases the rest exactly, in the ledger and the budget", async () => {
    const { agent_id, agreementId, base } = await held(10, 10);
    const c1 = await w.outcome({ ...base, outcome: "captured", amount: 3.33, idempotency_key: "cap-1" });
    expect(c1.status).toBe(200);
    expect(c1.body).toMatchObject({ outcome: "captured", replayed: false, hold: { held: "10.00", captured: "3.33", counted: "10.00", open: true } });
    expect(await spent(agreementId)).toBe(1000n);
    // The read API splits the spend into held (open, not captured) and captured.
    expect((await w.call("GET", `/v1/agreements/${agreementId}`, w.operatorKey)).body.budget).toMatchObject({
      intents: [{ intent_id: "i1", spent: "10.00", held: "6.67", captured: "3.33", remaining: "0.00" }],
    });
    const c2 = await w.outcome({ ...base, outcome: "captured", amount: 4.01, final: true, idempotency_key: "cap-2" });
    expect(c2.body).toMatchObject({
      entries: [
        { outcome: "captured", amount: 4.01, final: true, idempotency_key: "cap-2" },
        { outcome: "released", amount: 2.66, cause: "capture" },
      ],
      hold: { captured: "7.34", counted: "7.34", open: false },
    });
    expect(await spent(agreementId)).toBe(734n);
    expect((await w.call("GET", `/v1/agreements/${agreementId}`, w.operatorKey)).body.budget).toMatchObject({
      intents: [{ intent_id: "i1", spent: "7.34", held: "0.00", captured: "7.34", remaining: "2.66" }],
    });
    // The released 2.66 is room for the next payment, not a cent more.
    expect((await w.verify({ agent_id, action: action({ amount: 2.66 }) })).body.verdict).toBe("ALLOW");
    expect((await w.verify({ agent_id, action: action({ amount: 0.01 }) })).body.reasons).toEqual(["CUMULATIVE_BUDGET_EXCEEDED"]);
    expect((await ledgerOf(agreementId)).map((e) => e.outcome)).toEqual(["allowed", "captured", "captured", "released", "allowed"]);
  });

  it("a repeated capture answers the same; another under its key, one beyond the hold, one after the final are 409s", async () => {
    const { agreementId, base } = await held(10, 100);
    const first = await w.outcome({ ...base, outcome: "captured", amount: 4, idempotency_key: "k" });
    const again = await w.outcome({ ...base, outcome: "captured", amount: 4, idempotency_key: "k" });
    expect(again.body).toMatchObject({ replayed: true, entries: first.body.entries });
    expect(await w.outcome({ ...base, outcome: "captured", amount: 5, idempotency_key: "k" })).toMatchObject({
      status: 409,
      body: { error: `idempotency_key was already used for another captured step of action ${base.action_id}` },
    });
    expect(await w.outcome({ ...base, outcome: "captured", amount: 6.01, idempotency_key: "k2" })).toMatchObject({
      status: 409,
      body: { error: "capture exceeds the 6.00 USD left of the hold" },
    });
    expect((await w.outcome({ ...base, outcome: "captured", amount: 6, idempotency_key: "k2" })).body.hold).toMatchObject({ open: false });
    expect(await w.outcome({ ...base, outcome: "captured", amount: 0.01, idempotency_key: "k3" })).toMatchObject({
      status: 409,
      body: { error: "outcome captured cannot follow captured" },
    });
    expect(await w.outcome({ ...base, outcome: "failed" })).toMatchObject({ status: 409 });
    expect((await ledgerOf(agreementId)).map((e) => e.outcome)).toEqual(["allowed", "captured", "captured"]);
  });

  it("400 for a step without its amount or key, an amount finer than the currency, members an outcome does not take", async () => {
    const { base } = await held(10, 100);
    expect(await w.outcome({ ...base, outcome: "captured", amount: 1 })).toMatchObject({
      status: 400,
      body: { error: "outcome captured needs amount and idempotency_key" },
    });
    expect(await w.outcome({ ...base, outcome: "captured", amount: 1.001, idempotency_key: "x" })).toMatchObject({ status: 400 });
    expect(await w.outcome({ ...base, outcome: "voided", amount: 1 })).toMatchObject({ status: 400 });
    expect(await w.outcome({ ...base, outcome: "settled", amount: 1 })).toMatchObject({ status: 400 });
    expect(await w.outcome({ ...base, outcome: "expired" })).toMatchObject({ status: 400 });
  });

  it("a void releases what is not captured; a retry of the voided action is never answered ALLOW again", async () => {
    const { agent_id, agreementId, base } = await held(10, 10);
    await w.outcome({ ...base, outcome: "captured", amount: 2.5, idempotency_key: "c" });
    const v = await w.outcome({ ...base, outcome: "voided" });
    expect(v.body).toMatchObject({ entries: [{ outcome: "voided", amount: 7.5 }], hold: { counted: "2.50", open: false } });
    expect((await w.outcome({ ...base, outcome: "voided" })).body).toMatchObject({ replayed: true, entries: v.body.entries });
    expect(await spent(agreementId)).toBe(250n);
    expect((await w.verify({ agent_id, action: action({ amount: 7.5 }) })).body.verdict).toBe("ALLOW");
  });

  it("only the agreement's payment-side parties record steps: the operator gets 403, a stranger 404", async () => {
    const { base } = await held(10, 100);
    expect((await w.outcome({ ...base, outcome: "voided" }, w.operatorKey)).status).toBe(403);
    const stranger = await w.createOrg("processor_psp");
    const key = (await w.issueKey(stranger)).token;
    expect(await w.outcome({ ...base, outcome: "voided" }, key)).toMatchObject({ status: 404, body: { error: "agreement was not found" } });
  });
});

describe("expiry", () => {
  it("a hold not captured in time is released by the service with an expired entry; several sweeps expire it once", async () => {
    const { agent_id, agreementId, base } = await held(10, 10);
    await w.outcome({ ...base, outcome: "captured", amount: 1, idempotency_key: "c" });
    const other = await held(5, 100);
    await w.outcome({ ...other.base, outcome: "voided" });
    const future = new Date(Date.now() + 60_000);
    const sweeps = await Promise.all([1, 2, 3].map(() => expireHolds(w.db.pool, { before: future, at: future.toISOString(), limit: 1000 })));
    expect(sweeps.reduce((n, s) => n + s.expired, 0)).toBeGreaterThanOrEqual(1);
    const ledger = await ledgerOf(agreementId);
    expect(ledger.map((e) => e.outcome)).toEqual(["allowed", "captured", "expired"]);
    expect(ledger[2]).toMatchObject({ amount: 9, idempotency_key: base.action_id });
    expect(await spent(agreementId)).toBe(100n);
    // A voided hold is not expired again.
    expect((await ledgerOf(other.agreementId)).map((e) => e.outcome)).toEqual(["allowed", "voided"]);
    expect(await w.outcome({ ...base, outcome: "voided" })).toMatchObject({ status: 409, body: { error: "outcome voided cannot follow expired" } });
    expect((await w.verify({ agent_id, action: action({ amount: 9 }) })).body.verdict).toBe("ALLOW");
  });
});

describe("the expiry sweep of a process (WRIT_HOLD_EXPIRY_SECONDS)", () => {
  it("expires only holds older than the setting by the service clock, logs each, and stops cleanly", async () => {
    const { agreementId, base } = await held(10, 10);
    let now = new Date(Date.now() + 30_000);
    const lines: { obj: object; msg: string }[] = [];
    const log = { info: (obj: object, msg: string) => lines.push({ obj, msg }), warn: (obj: object, msg: string) => lines.push({ obj, msg }) };
    const sweep = startHoldExpiry(w.db.pool, { expirySeconds: 60, intervalMs: 3_600_000, clock: () => now, log });
    try {
      await sweep.runNow();
      expect((await ledgerOf(agreementId)).map((e) => e.outcome)).toEqual(["allowed"]);
      now = new Date(Date.now() + 120_000);
      expect(await sweep.runNow()).toBeGreaterThanOrEqual(1);
      expect((await ledgerOf(agreementId)).map((e) => e.outcome)).toEqual(["allowed", "expired"]);
      expect(lines).toContainEqual({
        obj: expect.objectContaining({ agreement_id: agreementId, action_id: base.action_id, outcome: "expired", amount: 10 }),
        msg: "outcome recorded",
      });
      expect(await spent(agreementId)).toBe(0n);
    } finally {
      await sweep.stop();
    }
  });
});

describe("refunds", () => {
  it("by default a refund gives no budget back (no purchase-and-refund laundering); never more than captured", async () => {
    const { agent_id, agreementId, base } = await held(10, 10);
    await w.outcome({ ...base, outcome: "captured", amount: 10, idempotency_key: "c" });
    const r = await w.outcome({ ...base, outcome: "refunded", amount: 6, idempotency_key: "r1" });
    expect(r.body).toMatchObject({ entries: [{ outcome: "refunded", amount: 6 }], hold: { refunded: "6.00", counted: "10.00" } });
    expect(await w.outcome({ ...base, outcome: "refunded", amount: 4.01, idempotency_key: "r2" })).toMatchObject({
      status: 409,
      body: { error: "refund exceeds the 4.00 USD captured and not yet refunded" },
    });
    expect(await spent(agreementId)).toBe(1000n);
    expect((await w.verify({ agent_id, action: action({ amount: 1 }) })).body.reasons).toEqual(["CUMULATIVE_BUDGET_EXCEEDED"]);
  });

  it("the mandate alone cannot restore budget under a delegation whose scope does not say so", async () => {
    const { agreementId, base } = await held(10, 10, { refunds_restore_budget: true });
    await w.outcome({ ...base, outcome: "captured", amount: 8, final: true, idempotency_key: "c" });
    const r = await w.outcome({ ...base, outcome: "refunded", amount: 3, idempotency_key: "r" });
    expect(r.body).toMatchObject({ entries: [{ outcome: "refunded", amount: 3 }], hold: { counted: "8.00" } });
    expect(await spent(agreementId)).toBe(800n);
  });

  it("a mandate and a delegation scope with refunds_restore_budget give the refund back through a released entry", async () => {
    const { agent_id, agreementId, base } = await held(10, 10, { refunds_restore_budget: true }, { refunds_restore_budget: true });
    await w.outcome({ ...base, outcome: "captured", amount: 8, final: true, idempotency_key: "c" });
    const r = await w.outcome({ ...base, outcome: "refunded", amount: 3, idempotency_key: "r" });
    expect(r.body).toMatchObject({
      entries: [
        { outcome: "refunded", amount: 3 },
        { outcome: "released", amount: 3, cause: "refund" },
      ],
      hold: { counted: "5.00" },
    });
    expect(await spent(agreementId)).toBe(500n);
    expect((await w.verify({ agent_id, action: action({ amount: 5 }) })).body.verdict).toBe("ALLOW");
    expect((await ledgerOf(agreementId)).map((e) => e.outcome)).toEqual(["allowed", "captured", "released", "refunded", "released", "allowed"]);
  });
});
