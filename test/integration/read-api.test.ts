/**
 * The read API over real HTTP (docs/records.md): delegations, agreements, ledgers and the
 * remaining budget, and who may read them (the tenant-isolation matrix): the record's operator,
 * an agreement's payment-side party, the agent's principal through a portal session; every
 * other credential gets 401/403 or the 404 of an unknown record.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
let agentId = "";
let agreementId = "";
let delegationId = "";
let bareAgreementId = "";
let sessionToken = "";
let otherSession = "";
const keys: Record<string, string> = {};

/** A portal session of a new principal (magic link through the dev mailbox). */
async function portalSession(email: string): Promise<{ token: string; principalId: string }> {
  expect((await w.call("POST", "/v1/portal/magic-link", null, { email })).status).toBe(200);
  const mail = await w.call("GET", "/v1/dev/mailbox", null);
  const s = await w.call("POST", "/v1/sessions", null, { token: mail.body.token });
  expect(s.status).toBe(200);
  return { token: String(s.body.session_token), principalId: String(s.body.principal_id) };
}

beforeAll(async () => {
  w = await startVerifyWorld({ BUR_DEV_MAILBOX: "1" });
  const mine = await portalSession("principal@example.test");
  sessionToken = mine.token;
  otherSession = (await portalSession("someone-else@example.test")).token;
  agentId = (await w.registerAgent(w.operatorKey, { principal_id: mine.principalId })).agent_id;
  const stored = await storeAgreement(w, {
    mandates: [mandate(agentId, "i1", { maximum_amount: 40, cumulative_maximum: 60 }), mandate(agentId, "i2", { maximum_amount: 30, cumulative_maximum: 50 })],
    parentLimits: { currency: "USD", maximum_amount: 40, cumulative_maximum: 110 },
    delegation: { scope: { currency: "USD", maximum_amount: 40, cumulative_maximum: 100 } },
  });
  agreementId = stored.agreementId;
  delegationId = stored.delegationId as string;
  const bare = await w.registerAgent(w.operatorKey);
  bareAgreementId = (await storeAgreement(w, { mandates: [mandate(bare.agent_id, "j1", { cumulative_maximum: 50 })], delegation: false })).agreementId;

  const otherOperator = await w.createOrg("agent_operator");
  keys.operator = w.operatorKey;
  keys.otherOperator = (await w.issueKey(otherOperator)).token;
  keys.party = w.psp.key;
  keys.stranger = (await w.issueKey(await w.createOrg("merchant"))).token;
  keys.noRead = (await w.issueKey(w.operatorOrg, { scopes: ["verify"] })).token;
});
afterAll(async () => {
  await w?.close();
});

describe("who may read what", () => {
  type Who = "operator" | "otherOperator" | "party" | "stranger" | "noRead" | "admin" | "none" | "session" | "otherSession";
  const token = (who: Who): string | null =>
    who === "none" ? null : who === "admin" ? w.admin : who === "session" ? sessionToken : who === "otherSession" ? otherSession : (keys[who] as string);
  const routes = () => [
    { path: `/v1/delegations/${delegationId}`, ok: ["operator", "session"] },
    { path: `/v1/agents/${agentId}/delegations`, ok: ["operator", "session"] },
    { path: `/v1/agreements/${agreementId}`, ok: ["operator", "party", "session"] },
    { path: `/v1/agreements/${agreementId}/ledger`, ok: ["operator", "party", "session"] },
  ];

  it("the matrix: 200 for the entitled, 404 for everyone else with a valid credential, 401/403 for bad credentials", async () => {
    const all: Who[] = ["operator", "otherOperator", "party", "stranger", "noRead", "admin", "none", "session", "otherSession"];
    for (const r of routes()) {
      for (const who of all) {
        const got = await w.call("GET", r.path, token(who));
        const want = r.ok.includes(who) ? 200 : who === "none" ? 401 : who === "noRead" || who === "admin" ? 403 : 404;
        expect(got.status, `${who} GET ${r.path}: ${JSON.stringify(got.body)}`).toBe(want);
        if (want !== 200) expect(Object.keys(got.body)).toEqual(["error"]);
      }
    }
  });

  it("an unknown record and a record one may not see answer alike", async () => {
    const unknown = await w.call("GET", "/v1/agreements/agr-none", w.operatorKey);
    const hidden = await w.call("GET", `/v1/agreements/${agreementId}`, keys.otherOperator as string);
    expect(unknown).toMatchObject({ status: 404, body: { error: "agreement was not found" } });
    expect(hidden.body).toEqual(unknown.body);
    expect((await w.call("GET", "/v1/delegations/del-none", w.operatorKey)).body).toEqual(
      (await w.call("GET", `/v1/delegations/${delegationId}`, keys.party as string)).body,
    );
  });
});

describe("what they read", () => {
  it("an agent checks its remaining budget before it pays, then sees the spend counted, and a release given back", async () => {
    const before = await w.call("GET", `/v1/agreements/${agreementId}`, w.operatorKey);
    expect(before.body).toMatchObject({
      agreement_id: agreementId,
      agent_id: agentId,
      delegation_id: delegationId,
      status: "active",
      revocation: null,
      ledger_sequence: 0,
      budget: {
        intents: [
          { intent_id: "i1", currency: "USD", maximum_amount: "40.00", limit: "60.00", spent: "0.00", remaining: "60.00" },
          { intent_id: "i2", currency: "USD", maximum_amount: "30.00", limit: "50.00", spent: "0.00", remaining: "50.00" },
        ],
        agreement: { currency: "USD", limit: "110.00", spent: "0.00", remaining: "110.00" },
        delegation: { delegation_id: delegationId, currency: "USD", maximum_amount: "40.00", limit: "100.00", spent: "0.00", remaining: "100.00" },
      },
    });
    expect((before.body.agreement as { mandates: unknown[] }).mandates).toHaveLength(2);

    const paid = [];
    for (const [intent, amount] of [
      ["i1", 12.5],
      ["i2", 30],
      ["i1", 40],
    ] as const) {
      const a = action({ intent_id: intent, amount });
      const r = await w.verify({ agent_id: agentId, action: a });
      expect(r.body.verdict).toBe("ALLOW");
      paid.push(a);
    }
    const after = await w.call("GET", `/v1/agreements/${agreementId}/ledger`, w.operatorKey);
    expect(after.body).toMatchObject({
      ledger_sequence: 3,
      next_after: null,
      budget: {
        intents: [
          { intent_id: "i1", spent: "52.50", remaining: "7.50" },
          { intent_id: "i2", spent: "30.00", remaining: "20.00" },
        ],
        agreement: { spent: "82.50", remaining: "27.50" },
        delegation: { spent: "82.50", remaining: "17.50" },
      },
    });
    expect((after.body.entries as { action_id: string }[]).map((e) => e.action_id)).toEqual(paid.map((a) => a.action_id));
    expect(after.body.ledger_head).toBe((after.body.entries as { entry_hash: string }[])[2]?.entry_hash);

    // The payment provider reports the 40 USD payment failed: the budget gets it back.
    expect((await w.outcome({ agreement_id: agreementId, action_id: paid[2]?.action_id, outcome: "failed" })).status).toBe(200);
    const released = await w.call("GET", `/v1/agreements/${agreementId}`, sessionToken);
    expect(released.body).toMatchObject({
      ledger_sequence: 4,
      budget: { intents: [{ spent: "12.50", remaining: "47.50" }, {}], delegation: { spent: "42.50", remaining: "57.50" } },
    });
  });

  it("pages the ledger with after and limit", async () => {
    const first = await w.call("GET", `/v1/agreements/${agreementId}/ledger?limit=2`, w.psp.key);
    expect(first.body).toMatchObject({ next_after: 2 });
    expect((first.body.entries as { sequence: number }[]).map((e) => e.sequence)).toEqual([1, 2]);
    const rest = await w.call("GET", `/v1/agreements/${agreementId}/ledger?after=2&limit=2`, w.psp.key);
    expect((rest.body.entries as { sequence: number }[]).map((e) => e.sequence)).toEqual([3, 4]);
    expect(rest.body.next_after).toBeNull();
    expect((await w.call("GET", `/v1/agreements/${agreementId}/ledger?limit=0`, w.psp.key)).status).toBe(400);
    expect((await w.call("GET", `/v1/agreements/${agreementId}/ledger?after=-1`, w.psp.key)).status).toBe(400);
  });

  it("a delegation and an agent's delegations show their state; a revocation shows who, when and why", async () => {
    const d = await w.call("GET", `/v1/delegations/${delegationId}`, w.operatorKey);
    expect(d.body).toMatchObject({
      delegation_id: delegationId,
      agent_id: agentId,
      status: "active",
      revocation: null,
      agreement_ids: [agreementId],
      delegation: { scope: { cumulative_maximum: 100 } },
    });
    expect(await w.call("DELETE", `/svc/delegations/${delegationId}`, w.admin, { reason: "lost device" })).toMatchObject({ status: 200 });
    const listed = await w.call("GET", `/v1/agents/${agentId}/delegations`, sessionToken);
    expect(listed.body).toMatchObject({
      agent_id: agentId,
      delegations: [{ delegation_id: delegationId, status: "revoked", revocation: { reason: "lost device", by: "service" } }],
    });
    // Its agreement reads as revoked too (verify answers DELEGATION_REVOKED), saying why.
    const a = await w.call("GET", `/v1/agreements/${agreementId}`, w.operatorKey);
    expect(a.body).toMatchObject({ status: "revoked", revocation: { reason: `delegation ${delegationId} is revoked: lost device`, by: "service" } });
  });

  it("an agreement without a delegation has no delegation line; without parent limits no agreement line", async () => {
    const r = await w.call("GET", `/v1/agreements/${bareAgreementId}`, w.operatorKey);
    expect(r.status).toBe(200);
    expect(r.body.budget).toEqual({
      intents: [
        { intent_id: "j1", currency: "USD", maximum_amount: "100.00", limit: "50.00", spent: "0.00", remaining: "50.00", held: "0.00", captured: "0.00" },
      ],
    });
  });
});
