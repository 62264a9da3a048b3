/**
 * The service's own REVOKE decision on the verify path: the delegation (or, for an agreement
 * without one, the agreement) is revoked as policy acting for the principal, a `revocation`
 * entry is appended to the transparency log and the agent's subscribers are alerted, all in
 * one transaction; the next verify is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDelegation } from "../../src/store/delegations.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

async function lastLogEntry(): Promise<{ kind: string; sequence: number; body: Record<string, unknown> }> {
  const head = await w.call("GET", "/v1/log/head");
  const r = await w.call("GET", `/v1/log/entries/${String(head.body.tree_size)}`);
  return r.body.entry as { kind: string; sequence: number; body: Record<string, unknown> };
}

async function subscribe(agentId: string): Promise<string> {
  const wallet = await w.createOrg("wallet");
  const { token } = await w.issueKey(wallet);
  const r = await w.call("POST", "/v1/subscriptions", token, { agent_id: agentId, webhook_url: "http://127.0.0.1:9/hook" });
  expect(r.status).toBe(201);
  return r.body.subscription_id as string;
}

async function alertsFor(subscriptionId: string): Promise<Array<{ type: string; agent_id: string; details: Record<string, unknown> }>> {
  const { rows } = await w.db.pool.query<{ payload: { type: string; agent_id: string; details: Record<string, unknown> } }>(
    "SELECT payload FROM webhook_outbox WHERE subscription_id = $1 ORDER BY id",
    [subscriptionId],
  );
  return rows.map((r) => r.payload);
}

describe("REVOKE decisions", () => {
  it("a risk score at the threshold revokes the delegation, logs it and alerts subscribers", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const sub = await subscribe(agent_id);
    const { agreementId, delegationId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    const r = await w.verify({ agent_id, action: action(), risk_score: 95 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ verdict: "DENY", svc_decision: "REVOKE", required_action: "REVOKE_DELEGATION", agreement_id: agreementId });
    expect(r.body.reasons).toContain("RISK_REVOKE_THRESHOLD");

    const stored = await loadDelegation(w.db.pool, delegationId as string);
    expect(stored).toMatchObject({ status: "revoked", revokedBy: "policy" });
    expect(stored?.revokedReason).toContain("RISK_REVOKE_THRESHOLD");

    const entry = await lastLogEntry();
    expect(entry.kind).toBe("revocation");
    expect(entry.body).toEqual({ delegation_id: delegationId, ids: [delegationId], reason: stored?.revokedReason, by: "policy", at: expect.any(String) });

    const alerts = await alertsFor(sub);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ type: "revocation", agent_id, details: { delegation_id: delegationId, ids: [delegationId], by: "policy" } });

    const next = await w.verify({ agent_id, action: action() });
    expect(next.body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_REVOKED"], agreement_id: agreementId });
  });

  it("a burst of denied attempts revokes an agreement that has no delegation", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 20 })], delegation: false });
    for (let i = 0; i < 5; i++) {
      const r = await w.verify({ agent_id, action: action({ amount: 50 }) });
      expect(r.body).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK" });
    }
    const sixth = await w.verify({ agent_id, action: action({ amount: 50 }) });
    expect(sixth.body).toMatchObject({ verdict: "DENY", svc_decision: "REVOKE" });
    expect(sixth.body.reasons).toContain("DENIED_ATTEMPT_BURST");
    const entry = await lastLogEntry();
    expect(entry).toMatchObject({ kind: "revocation", body: { agreement_id: agreementId, ids: [agreementId], by: "policy" } });
    const next = await w.verify({ agent_id, action: action({ amount: 5 }) });
    expect(next.body).toMatchObject({ verdict: "DENY", reasons: ["AGREEMENT_REVOKED"], agreement_id: agreementId });
  });
});

describe("which refusals count toward the burst, and its settings", () => {
  it("malformed amounts and refusals by the state of records never count: ten of them revoke nothing", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { delegationId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 20 })] });
    for (let i = 0; i < 10; i++) {
      const r = await w.verify({ agent_id, action: action({ amount: 10.001 }) });
      expect(r.body).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK", reasons: ["AMOUNT_INVALID"] });
      const unknown = await w.verify({ agent_id, action: action({ intent_id: "no-such-intent" }) });
      expect(unknown.body).toMatchObject({ verdict: "DENY", reasons: ["INTENT_NOT_FOUND"] });
    }
    expect(await loadDelegation(w.db.pool, delegationId as string)).toMatchObject({ status: "active" });
    expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW");
  });

  it("WRIT_DENIED_ATTEMPT_BURST sets the threshold; 0 turns the rule off", async () => {
    const three = await startVerifyWorld({ WRIT_DENIED_ATTEMPT_BURST: "3" });
    const off = await startVerifyWorld({ WRIT_DENIED_ATTEMPT_BURST: "0" });
    try {
      for (const [world, revokesAt] of [
        [three, 4],
        [off, 0],
      ] as const) {
        const { agent_id } = await world.registerAgent(world.operatorKey);
        const { delegationId } = await storeAgreement(world, { mandates: [mandate(agent_id, "i1", { maximum_amount: 20 })] });
        for (let i = 1; i <= 8; i++) {
          const r = await world.verify({ agent_id, action: action({ amount: 50 }) });
          if (i === revokesAt) {
            expect(r.body).toMatchObject({ svc_decision: "REVOKE" });
            expect(r.body.reasons).toContain("DENIED_ATTEMPT_BURST");
            break;
          }
          expect(r.body, `attempt ${i}`).toMatchObject({ svc_decision: "BLOCK", reasons: ["AMOUNT_ABOVE_INTENT_CEILING"] });
        }
        const stored = await loadDelegation(world.db.pool, delegationId as string);
        expect(stored?.status).toBe(revokesAt === 0 ? "active" : "revoked");
      }
    } finally {
      await Promise.all([three.close(), off.close()]);
    }
  });
});
