/**
 * The principal's portal API over real HTTP (docs/portal.md, "The principal's records"): the
 * seeded demo principal signs in with its public address demo@writ.dev through the dev
 * mailbox, lists its agents, delegations and agreements with their budgets, revokes its
 * delegation (recorded as the principal's act, logged, alerted) and verify then answers DENY;
 * another principal sees nothing and cannot revoke; no session is a 401.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_PRINCIPAL_EMAIL, DEMO_SEED_PRINCIPAL_ID } from "../../src/core/demo/seed.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

let w: RegistryWorld;
let operatorKey: string;

beforeAll(async () => {
  w = await startRegistryWorld({ BUR_ALLOW_DEMO_SEED: "1", BUR_DEV_MAILBOX: "1" });
  const seeded = await w.call("POST", "/v1/admin/seed-demo", w.admin);
  expect(seeded.status).toBe(200);
  operatorKey = seeded.body.operator_key as string;
});
afterAll(async () => {
  await w?.close();
});

/** Signs `email` in through the dev mailbox; the session token and principal id. */
async function signIn(email: string): Promise<{ session: string; principal: string }> {
  expect((await w.call("POST", "/v1/portal/magic-link", null, { email })).body).toEqual({ sent: true });
  const mail = await w.call("GET", "/v1/dev/mailbox");
  expect(mail.body.email).toBe(email);
  const s = await w.call("POST", "/v1/sessions", null, { token: mail.body.token });
  expect(s.status).toBe(200);
  return { session: s.body.session_token as string, principal: s.body.principal_id as string };
}

const verify = (actionId: string, amount = 12.5) =>
  w.call("POST", "/v1/verify", operatorKey, {
    agent_id: "agent_demo",
    action: { action_id: actionId, action_type: "purchase", amount, currency: "USD", proposed_at: new Date().toISOString(), merchant: "Corner Market" },
  });

describe("the principal's records", () => {
  it("the demo address signs in as prn_demo and sees the demo agent, delegation and agreement with what is left", async () => {
    expect((await verify("act_portal_1")).body.verdict).toBe("ALLOW");
    const { session, principal } = await signIn(DEMO_PRINCIPAL_EMAIL);
    expect(principal).toBe(DEMO_SEED_PRINCIPAL_ID);

    const agents = await w.call("GET", "/v1/portal/agents", session);
    expect(agents.status).toBe(200);
    expect(agents.headers.get("cache-control")).toBe("no-store");
    expect(agents.body).toMatchObject({
      principal_id: "prn_demo",
      agents: [{ agent_id: "agent_demo", status: "active", verification_level: "self_declared" }],
    });

    const delegations = await w.call("GET", "/v1/portal/delegations", session);
    expect(delegations.body).toMatchObject({
      principal_id: "prn_demo",
      delegations: [
        {
          delegation_id: "del_demo",
          agent_id: "agent_demo",
          status: "active",
          revocation: null,
          agreement_ids: ["agr_demo"],
          budget: { delegation_id: "del_demo", currency: "USD", maximum_amount: "50.00", limit: "500.00", spent: "12.50", remaining: "487.50" },
        },
      ],
    });

    const agreements = await w.call("GET", "/v1/portal/agreements", session);
    expect(agreements.body).toMatchObject({
      principal_id: "prn_demo",
      agreements: [{ agreement_id: "agr_demo", agent_id: "agent_demo", status: "active", ledger_sequence: 1 }],
    });
    const [agr] = agreements.body.agreements as Array<{ budget: { intents: Array<{ remaining?: string }>; delegation?: { remaining?: string } } }>;
    expect(agr?.budget.delegation?.remaining).toBe("487.50");
    // The same body as the single read.
    expect((await w.call("GET", "/v1/agreements/agr_demo", session)).body).toEqual((agreements.body.agreements as unknown[])[0]);
  });

  it("another principal sees empty lists and gets 404 for the demo delegation; no session is a 401", async () => {
    const { session } = await signIn("someone.else@example.test");
    for (const path of ["/v1/portal/agents", "/v1/portal/delegations", "/v1/portal/agreements"]) {
      const r = await w.call("GET", path, session);
      expect(r.status).toBe(200);
      expect(Object.values(r.body).find(Array.isArray)).toEqual([]);
      expect(await w.call("GET", path)).toMatchObject({ status: 401, body: { error: "portal session is missing, invalid or expired" } });
      // An organization key is not a portal session.
      expect((await w.call("GET", path, operatorKey)).status).toBe(401);
    }
    expect(await w.call("POST", "/v1/portal/delegations/del_demo/revoke", session, {})).toMatchObject({
      status: 404,
      body: { error: "delegation was not found" },
    });
    expect(await w.call("POST", "/v1/portal/delegations/del_unknown/revoke", session, {})).toMatchObject({
      status: 404,
      body: { error: "delegation was not found" },
    });
    expect((await w.call("POST", "/v1/portal/delegations/del_demo/revoke", null, {})).status).toBe(401);
    expect(await w.call("POST", "/v1/portal/delegations/del_demo/revoke", session, { reason: { text: "no" } })).toMatchObject({ status: 400 });
    expect((await verify("act_portal_2")).body.verdict).toBe("ALLOW");
  });

  it("the principal revokes its delegation: recorded by the principal, logged, verify answers DENY; a repeat changes nothing", async () => {
    const { session } = await signIn(DEMO_PRINCIPAL_EMAIL);
    const r = await w.call("POST", "/v1/portal/delegations/del_demo/revoke", session);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ revoked: true, delegation_id: "del_demo", revoked_ids: ["del_demo"], agreement_ids: ["agr_demo"] });
    const sequence = r.body.log_sequence as number;
    expect(sequence).toBeGreaterThan(0);
    const entry = await w.call("GET", `/v1/log/entries/${sequence}`);
    expect(entry.body.entry).toMatchObject({
      kind: "revocation",
      body: { delegation_id: "del_demo", by: "principal", reason: "revoked by the principal in the portal", ids: ["del_demo"] },
    });

    const d = await w.call("GET", "/v1/delegations/del_demo", session);
    expect(d.body).toMatchObject({ status: "revoked", revocation: { by: "principal", reason: "revoked by the principal in the portal" } });
    const refused = await verify("act_portal_3");
    expect(refused.body).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK" });

    expect((await w.call("POST", "/v1/portal/delegations/del_demo/revoke", session, { reason: "again" })).body).toEqual({
      revoked: false,
      delegation_id: "del_demo",
      revoked_ids: [],
      agreement_ids: [],
      log_sequence: null,
    });
    const listed = await w.call("GET", "/v1/portal/delegations", session);
    expect(listed.body).toMatchObject({ delegations: [{ delegation_id: "del_demo", status: "revoked" }] });
  });
});
