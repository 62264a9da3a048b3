/**
 * Verify across currencies with a local Frankfurter stand-in: an action in another currency
 * than its intent is converted with the day's rate (rounded up) and recorded in the intent's
 * currency; without a rate it steps up with CURRENCY_MISMATCH; the source is asked only when a
 * currency differs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { startFrankfurter, type FrankfurterStandIn } from "../helpers/frankfurter.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

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
