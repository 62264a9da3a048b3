import { describe, expect, it } from "vitest";
import {
  DEMO_AGENT_ID,
  DEMO_DELEGATION_LIFETIME_MS,
  DEMO_INTENT_ID,
  buildDemoRecords,
  demoMandate,
  demoPrincipalSigner,
  expiryFor,
  parseDemoCheckRequest,
} from "../../../../src/core/demo/index.js";
import { prepareAgreement, renderMandate, verifyMandate } from "../../../../src/core/agreement/index.js";
import { prepareDelegation } from "../../../../src/core/delegation/index.js";

const NOW = Date.parse("2026-03-02T09:30:00Z");
const req = parseDemoCheckRequest({
  intent: { maximum_amount: 25.5, currency: "EUR", purpose: "books", category: "books", natural_language: "a novel", time_limit: "2026-03-04" },
  payment: { amount: 12, currency: "EUR", merchant: "Bookshop", item: "novel" },
});

describe("expiryFor", () => {
  it("ends a plain date at its last UTC second, keeps a date-time, defaults to the end of tomorrow", () => {
    expect(expiryFor("2026-03-04", NOW)).toBe("2026-03-04T23:59:59Z");
    expect(expiryFor("2026-03-04T08:00:00+02:00", NOW)).toBe("2026-03-04T08:00:00+02:00");
    expect(expiryFor(undefined, NOW)).toBe("2026-03-03T23:59:59Z");
    expect(expiryFor(undefined, Date.parse("2026-12-31T23:59:59Z"))).toBe("2027-01-01T23:59:59Z");
  });
});

describe("demoMandate", () => {
  it("maps the intent field by field", () => {
    expect(demoMandate(req.intent, NOW)).toEqual({
      intent_id: DEMO_INTENT_ID,
      principal: { type: "human", id: "prn_demo" },
      agent: { agent_id: DEMO_AGENT_ID, public_key: expect.objectContaining({ kty: "OKP", crv: "Ed25519" }) },
      currency: "EUR",
      maximum_amount: 25.5,
      purpose: "books",
      natural_language: "a novel",
      categories: ["books"],
      expires_at: "2026-03-04T23:59:59Z",
    });
  });

  it("has no expiry when include_expiry is false, whatever the time limit", () => {
    expect(demoMandate({ ...req.intent, include_expiry: false }, NOW).expires_at).toBeUndefined();
  });
});

describe("buildDemoRecords", () => {
  it("signs an active agreement with the demo principal, with an intact event chain and a fresh empty ledger", async () => {
    const { agreement } = await buildDemoRecords(req, NOW);
    expect(agreement.status).toBe("active");
    expect(agreement.ledger).toEqual([]);
    expect(agreement.ledger_as_of).toBe("2026-03-02T09:30:00.000Z");
    expect(agreement.events.map((e) => e.type)).toEqual(["proposed", "accepted", "activated"]);
    const m = agreement.mandates[0];
    expect(m && (await verifyMandate(m))).toBe("valid");
    expect(m?.principal.public_key).toEqual(demoPrincipalSigner().publicJwk);
    expect(m?.rendering).toBe(renderMandate({ ...demoMandate(req.intent, NOW) }));
    const prepared = await prepareAgreement(agreement, { now: NOW });
    expect(prepared.eventChainProblem).toBeUndefined();
    expect(prepared.ledger).toEqual({ state: "ok" });
  });

  it("delegates the demo intent to the demo agent for one hour, by the principal's key, without problems", async () => {
    const { delegation, action } = await buildDemoRecords(req, NOW);
    const p = prepareDelegation(delegation);
    expect(p.problems).toEqual([]);
    expect(p.expiresAtMs - p.grantedAtMs).toBe(DEMO_DELEGATION_LIFETIME_MS);
    expect(p.principalKid).toBe(demoPrincipalSigner().kid);
    expect(delegation.scope).toEqual({ currency: "EUR", intents: [DEMO_INTENT_ID] });
    expect(action).toEqual({
      action_id: "act_demo",
      action_type: "purchase",
      amount: 12,
      currency: "EUR",
      proposed_at: "2026-03-02T09:30:00.000Z",
      agent_id: DEMO_AGENT_ID,
      merchant: "Bookshop",
      item: "novel",
    });
  });

  it("is deterministic: the same request and time give the same records", async () => {
    expect(await buildDemoRecords(req, NOW)).toEqual(await buildDemoRecords(req, NOW));
  });
});
