import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyId, signerFromSeed } from "../../src/core/jose/index.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// No DATABASE_URL: the demo check needs no storage.
const NOW = new Date("2026-03-02T09:30:00Z");
let server: TestServer;

const intent = {
  maximum_amount: 50,
  currency: "USD",
  purpose: "weekly groceries",
  category: "groceries",
  natural_language: "Buy this week's groceries, nothing over fifty dollars.",
  include_expiry: true,
  time_limit: "2026-03-08",
};
const payment = { amount: 42.5, currency: "USD", merchant: "Corner Market", item: "groceries basket" };

async function check(body: unknown, raw = false) {
  const r = await fetch(`${server.url}/demo/check`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: raw ? (body as string) : JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  server = await startTestServer({}, { clock: () => NOW });
});

afterAll(async () => {
  await server?.close();
});

describe("POST /demo/check: the three behaviours", () => {
  it("allows a payment within the ceiling with an expiry: ALLOW, empty reasons, NONE", async () => {
    const r = await check({ intent, payment });
    expect(r.status).toBe(200);
    const principalSeed = createHash("sha256").update("writ demo principal").digest();
    expect(r.body).toEqual({
      verdict: "ALLOW",
      svc_decision: "ALLOW",
      reasons: [],
      messages: [],
      required_action: "NONE",
      confirmation_text: "prn_demo authorizes agent agent_demo; for: weekly groceries; up to 50 USD per payment; in groceries; until 2026-03-08T23:59:59Z.",
      mandate_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      principal: "prn_demo",
      principal_fingerprint: keyId(signerFromSeed(principalSeed).publicJwk),
      agent_id: "agent_demo",
      agreement_id: "agr_demo",
      status: "active",
      demo: true,
    });
  });

  it("denies a payment above the ceiling: DENY, BLOCK, AMOUNT_ABOVE_INTENT_CEILING", async () => {
    const r = await check({ intent, payment: { ...payment, amount: 50.01 } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK", status: "active", demo: true });
    expect(r.body.reasons).toContain("AMOUNT_ABOVE_INTENT_CEILING");
    expect(r.body.messages).toContainEqual({
      code: "AMOUNT_ABOVE_INTENT_CEILING",
      message: "50.01 USD is above intent int_demo's ceiling 50.00 USD",
    });
  });

  it("steps up an intent without expiry: STEP_UP, OVER_BROAD_INTENT, PRINCIPAL_CONFIRMATION", async () => {
    const r = await check({ intent: { ...intent, include_expiry: false }, payment });
    expect(r.body).toMatchObject({ verdict: "STEP_UP", svc_decision: "STEP_UP", required_action: "PRINCIPAL_CONFIRMATION" });
    expect(r.body.reasons).toContain("OVER_BROAD_INTENT");
    expect(r.body.confirmation_text).not.toContain("until");
  });

  it("answers the same request with the same response", async () => {
    const a = await check({ intent, payment });
    const b = await check({ intent, payment });
    expect(b.body).toEqual(a.body);
    const other = await check({ intent: { ...intent, maximum_amount: 60 }, payment });
    expect(other.body.mandate_hash).not.toBe(a.body.mandate_hash);
  });

  it("denies with INTENT_EXPIRED when the time limit has passed", async () => {
    const r = await check({ intent: { ...intent, time_limit: "2026-03-01" }, payment });
    expect(r.body).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK", reasons: ["INTENT_EXPIRED"] });
  });

  it("takes an RFC 3339 time limit as given and defaults a missing one to the end of tomorrow (UTC)", async () => {
    const exact = await check({ intent: { ...intent, time_limit: "2026-03-02T10:00:00+01:00" }, payment });
    expect(exact.body).toMatchObject({ verdict: "DENY", reasons: ["INTENT_EXPIRED"] }); // 09:00Z < 09:30Z
    const { time_limit: _omit, ...noLimit } = intent;
    const dflt = await check({ intent: noLimit, payment });
    expect(dflt.body).toMatchObject({ verdict: "ALLOW", reasons: [] });
    expect(dflt.body.confirmation_text).toContain("until 2026-03-03T23:59:59Z");
  });

  it("steps up a payment in another currency (no rates in the demo): CURRENCY_MISMATCH", async () => {
    const r = await check({ intent, payment: { ...payment, currency: "EUR" } });
    expect(r.body).toMatchObject({ verdict: "STEP_UP", reasons: ["CURRENCY_MISMATCH"], required_action: "CONVERT_CURRENCY" });
  });

  it("needs only the amounts and currencies", async () => {
    const r = await check({ intent: { maximum_amount: 1000, currency: "JPY" }, payment: { amount: 999, currency: "JPY" } });
    expect(r.body).toMatchObject({ verdict: "ALLOW", reasons: [] });
  });
});

describe("POST /demo/check: 400", () => {
  const cases: [string, unknown, string][] = [
    ["a string amount", { intent, payment: { ...payment, amount: "42.50" } }, "payment.amount must be a number"],
    ["a boolean ceiling", { intent: { ...intent, maximum_amount: true }, payment }, "intent.maximum_amount must be a number"],
    ["a negative amount", { intent, payment: { ...payment, amount: -1 } }, "payment.amount must not be negative"],
    ["too many decimals", { intent, payment: { ...payment, amount: 1.005 } }, "payment.amount 1.005 has more decimal places than USD allows"],
    [
      "decimals in JPY",
      { intent: { ...intent, currency: "JPY", maximum_amount: 10.5 }, payment },
      "intent.maximum_amount 10.5 has more decimal places than JPY allows",
    ],
    ["a missing amount", { intent, payment: { currency: "USD" } }, "payment.amount is required"],
    ["a lower-case currency", { intent: { ...intent, currency: "usd" }, payment }, "intent.currency must be three upper-case letters"],
    ["a two-letter currency", { intent, payment: { ...payment, currency: "US" } }, "payment.currency must be three upper-case letters"],
    ["a missing currency", { intent, payment: { amount: 1 } }, "payment.currency is required"],
    ["no intent", { payment }, "intent is required"],
    ["a payment array", { intent, payment: [] }, "payment must be an object"],
    ["a non-boolean include_expiry", { intent: { ...intent, include_expiry: "yes" }, payment }, "intent.include_expiry must be a boolean"],
    [
      "an unusable time_limit",
      { intent: { ...intent, time_limit: "next friday" }, payment },
      "intent.time_limit must be a date (YYYY-MM-DD) or an RFC 3339 date-time",
    ],
    [
      "an impossible date",
      { intent: { ...intent, time_limit: "2026-02-30" }, payment },
      "intent.time_limit must be a date (YYYY-MM-DD) or an RFC 3339 date-time",
    ],
    ["a non-string merchant", { intent, payment: { ...payment, merchant: 7 } }, "payment.merchant must be a string"],
    ["a body that is an array", [], "request body must be a JSON object"],
  ];
  for (const [what, body, error] of cases) {
    it(`refuses ${what}`, async () => {
      expect(await check(body)).toEqual({ status: 400, body: { error } });
    });
  }

  it("refuses a body that is not JSON", async () => {
    expect(await check("{not json", true)).toEqual({ status: 400, body: { error: "request body is not valid JSON" } });
  });
});
