/**
 * Verify across currencies with a local Frankfurter stand-in: an action in another currency
 * than its intent is converted with the day's rate (rounded up) and recorded in the intent's
 * currency; without a rate it steps up with CURRENCY_MISMATCH; the source is asked only when a
 * currency differs. The rate's day is the decision's (the service clock), never the agent's
 * `proposed_at`, which must be within WRIT_PROPOSED_AT_SKEW_SECONDS of the service clock.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { startFrankfurter, type FrankfurterStandIn } from "../helpers/frankfurter.js";
import { action, iso, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let fx: FrankfurterStandIn;
let w: VerifyWorld;
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  fx = await startFrankfurter();
  w = await startVerifyWorld({ SVC_FX_SOURCE_URL: fx.url });
});
afterAll(async () => {
  await w?.close();
  await fx?.close();
});

describe("verify across currencies", () => {
  it("converts with the day's rate, records in the intent's currency, and steps up without a rate", async () => {
    fx.setRate(today, "USD", "EUR", "0.8995");
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { currency: "EUR", maximum_amount: 50 })] });

    const converted = await w.verify({ agent_id, action: action({ amount: 10, currency: "USD" }) });
    expect(converted.body).toMatchObject({ verdict: "ALLOW", agreement_id: agreementId });
    const a = await loadAgreementWithLedger(w.db.pool, agreementId);
    expect(a?.ledger?.[0]).toMatchObject({ currency: "EUR", amount: 9 }); // 8.995 rounded up

    const above = await w.verify({ agent_id, action: action({ amount: 60, currency: "USD" }) });
    expect(above.body).toMatchObject({ verdict: "DENY", reasons: ["AMOUNT_ABOVE_INTENT_CEILING"] });

    const noRate = await w.verify({ agent_id, action: action({ amount: 10, currency: "GBP" }) });
    expect(noRate.body).toMatchObject({ verdict: "STEP_UP", svc_decision: "STEP_UP", reasons: ["CURRENCY_MISMATCH"], required_action: "CONVERT_CURRENCY" });
  });

  it("does not ask the source when the currencies match", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    fx.resetCalls();
    expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW");
    expect(fx.calls).toBe(0);
  });

  it("answers 400 for a well-formed code that is not ISO 4217 (QQQ), without asking the source", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { currency: "EUR", maximum_amount: 50 })] });
    fx.resetCalls();
    const r = await w.verify({ agent_id, action: action({ amount: 10, currency: "QQQ" }) });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: "action.currency QQQ is not a known currency" });
    expect(fx.calls).toBe(0);
  });
});

describe("the rate's day is the decision's, never the agent's", () => {
  it("1600 CHF proposed as of 2000-01-03 is refused (400) and never converted at that day's rate; the source is never asked about that day", async () => {
    // 1600 CHF is 944 USD at the 2000-01-03 rate (under the 1000 USD ceiling), 1440 USD today.
    fx.setRate("2000-01-03", "CHF", "USD", "0.59");
    fx.setRate(today, "CHF", "USD", "0.9");
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { currency: "USD", maximum_amount: 1000 })] });
    fx.resetCalls();

    const old = await w.verify({ agent_id, action: action({ amount: 1600, currency: "CHF", proposed_at: "2000-01-03T12:00:00Z" }) });
    expect(old.status).toBe(400);
    expect(old.body.error).toMatch(/^action\.proposed_at 2000-01-03T12:00:00Z is more than 300 seconds from the service clock \(/);
    const current = await w.verify({ agent_id, action: action({ amount: 1600, currency: "CHF" }) });
    expect(current.body).toMatchObject({ verdict: "DENY", reasons: ["AMOUNT_ABOVE_INTENT_CEILING"] });
    const fits = await w.verify({ agent_id, action: action({ amount: 1000, currency: "CHF" }) });
    expect(fits.body).toMatchObject({ verdict: "ALLOW" });
    expect((await loadAgreementWithLedger(w.db.pool, agreementId))?.ledger).toEqual([expect.objectContaining({ currency: "USD", amount: 900 })]);

    expect(fx.requests.length).toBeGreaterThan(0);
    expect(fx.requests.filter((r) => !r.startsWith(`/${today}?`))).toEqual([]);
  });

  it("a proposed_at within the skew is converted at the decision day's rate; outside it (past or future) is a 400 unless it repeats a stored answer", async () => {
    let offsetMs = 0;
    const world = await startVerifyWorld({ SVC_FX_SOURCE_URL: fx.url, WRIT_PROPOSED_AT_SKEW_SECONDS: "120" }, { clock: () => new Date(Date.now() + offsetMs) });
    try {
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      fx.setRate(yesterday, "SEK", "USD", "0.01");
      fx.setRate(today, "SEK", "USD", "0.1");
      const { agent_id } = await world.registerAgent(world.operatorKey);
      await storeAgreement(world, { mandates: [mandate(agent_id, "i1", { currency: "USD", maximum_amount: 100 })] });
      fx.resetCalls();
      const inside = action({ amount: 500, currency: "SEK", proposed_at: iso(Date.now() - 90_000) });
      const allowed = await world.verify({ agent_id, action: inside });
      expect(allowed.body).toMatchObject({ verdict: "ALLOW", ledger_entry: { sequence: 1 } });
      for (const at of [Date.now() - 130_000, Date.now() + 130_000, Date.parse(`${yesterday}T12:00:00Z`)]) {
        const r = await world.verify({ agent_id, action: action({ amount: 1, currency: "SEK", proposed_at: iso(at) }) });
        expect(r.status, iso(at)).toBe(400);
        expect(r.body.error).toMatch(/is more than 120 seconds from the service clock/);
      }
      expect(fx.requests.filter((r) => !r.startsWith(`/${today}?`))).toEqual([]);

      // Ten minutes on, the same request is answered from the stored decision; a changed one is still refused.
      offsetMs = 600_000;
      const again = await world.verify({ agent_id, action: inside });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(allowed.body);
      const changed = await world.verify({ agent_id, action: { ...inside, merchant: "elsewhere" } });
      expect(changed.status).toBe(409);
      const fresh = await world.verify({ agent_id, action: { ...inside, action_id: "act-fresh" } });
      expect(fresh.status).toBe(400);
    } finally {
      await world.close();
    }
  });
});
