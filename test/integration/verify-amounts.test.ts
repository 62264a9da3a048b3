/**
 * Amounts are read exactly: a JSON number a double cannot hold (`50.000000000000001`, which
 * JSON.parse reads as 50) is a 400 on every route, never a rounded ALLOW; minor units come
 * from ISO 4217 (IQD 3, HUF 2, JPY 0), and XTS / XXX are no payment currencies.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

/** POSTs `text` as it is (numbers exactly as written). */
async function postRaw(path: string, text: string, token: string | null = w.operatorKey): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(`${w.server.url}${path}`, { method: "POST", headers, body: text });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** A verify body whose amount is the literal `amount`. */
function verifyText(agentId: string, amount: string, currency = "USD"): string {
  const a = action({ currency });
  return `{"agent_id":${JSON.stringify(agentId)},"action":{"action_id":${JSON.stringify(a.action_id)},"action_type":"purchase","amount":${amount},"currency":"${currency}","proposed_at":${JSON.stringify(a.proposed_at)}}}`;
}

describe("amounts are read exactly", () => {
  it("50.000000000000001 USD is a 400 naming the amount, never an ALLOW of 50.00 (nothing is recorded)", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 50 })] });
    const r = await postRaw("/v1/verify", verifyText(agent_id, "50.000000000000001"));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^action\.amount 50\.000000000000001 cannot be read exactly: .* would be read as 50;/);
    // A string is not a number, however it reads: never coerced (it was, by Fastify's default Ajv, to 50).
    for (const literal of ['"50.000000000000001"', '"50"', "true", "[50]"]) {
      const refused = await postRaw("/v1/verify", verifyText(agent_id, literal));
      expect([literal, refused.status, refused.body.error]).toEqual([literal, 400, "action.amount must be a number"]);
    }
    for (const literal of ["12345678901234567890", "1e-400", "50.0000000000000000000001"]) {
      expect((await postRaw("/v1/verify", verifyText(agent_id, literal))).status, literal).toBe(400);
    }
    expect((await loadAgreementWithLedger(w.db.pool, agreementId))?.ledger ?? []).toEqual([]);
    // The same body with an amount the currency has: ALLOW, recorded at that amount.
    expect((await postRaw("/v1/verify", verifyText(agent_id, "50.00"))).body).toMatchObject({ verdict: "ALLOW" });
    expect((await postRaw("/v1/verify", verifyText(agent_id, "5e-1"))).body).toMatchObject({ verdict: "ALLOW" }); // an exponent is fine when exact
    expect(((await loadAgreementWithLedger(w.db.pool, agreementId))?.ledger ?? []).map((e) => e.amount)).toEqual([50, 0.5]);
  });

  it("more decimals than the currency has are refused (1.5 JPY, 1.0005 IQD); IQD has 3 and HUF 2 (ISO 4217, not CLDR's 0)", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, {
      mandates: [
        mandate(agent_id, "jpy", { currency: "JPY", maximum_amount: 1000 }),
        mandate(agent_id, "iqd", { currency: "IQD", maximum_amount: 10 }),
        mandate(agent_id, "huf", { currency: "HUF", maximum_amount: 5000 }),
      ],
      delegation: false,
    });
    const send = (amount: number, currency: string, intent_id: string) =>
      w.verify({ agent_id, agreement_id: agreementId, action: action({ amount, currency, intent_id }) });
    expect((await send(1.5, "JPY", "jpy")).body).toMatchObject({ verdict: "DENY", reasons: ["AMOUNT_INVALID"] });
    expect((await send(1.0005, "IQD", "iqd")).body).toMatchObject({ verdict: "DENY", reasons: ["AMOUNT_INVALID"] });
    expect((await send(15, "JPY", "jpy")).body).toMatchObject({ verdict: "ALLOW" });
    expect((await send(1.005, "IQD", "iqd")).body).toMatchObject({ verdict: "ALLOW" });
    expect((await send(1999.99, "HUF", "huf")).body).toMatchObject({ verdict: "ALLOW" });
    const ledger = (await loadAgreementWithLedger(w.db.pool, agreementId))?.ledger ?? [];
    expect(ledger.map((e) => [e.currency, e.amount])).toEqual([
      ["JPY", 15],
      ["IQD", 1.005],
      ["HUF", 1999.99],
    ]);
  });

  it("XTS and XXX are not payment currencies: 400 on verify and on the demo check", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    for (const currency of ["XTS", "XXX"]) {
      const r = await w.verify({ agent_id, action: action({ currency }) });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: `action.currency ${currency} is not a payment currency (ISO 4217 gives it no minor unit)` });
    }
    const demo = {
      intent: { maximum_amount: 50, currency: "XTS", purpose: "p", category: "c", natural_language: "n", include_expiry: false, time_limit: "2030-01-01" },
      payment: { amount: 1, currency: "XTS", merchant: "m", item: "i" },
    };
    const d = await w.call("POST", "/demo/check", null, demo);
    expect(d.status).toBe(400);
    expect(d.body.error).toMatch(/XTS is not a payment currency/);
  });

  it("the demo check refuses an inexact amount with a 400 too (every route's JSON body)", async () => {
    const text =
      '{"intent":{"maximum_amount":50,"currency":"USD","purpose":"p","category":"c","natural_language":"n","include_expiry":false,"time_limit":"2030-01-01"},' +
      '"payment":{"amount":50.000000000000001,"currency":"USD","merchant":"m","item":"i"}}';
    const r = await postRaw("/demo/check", text, null);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^payment\.amount 50\.000000000000001 cannot be read exactly/);
  });
});
