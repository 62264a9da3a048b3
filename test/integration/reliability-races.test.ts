/**
 * Concurrent verify requests that share one action_id, over real HTTP: whatever the order in
 * which they reach the ledger lock and the decision table, exactly one answer is given for the
 * action, a retry of the same request gets that answer, the ledger never holds an allowed spend
 * nobody was told about (a losing spend is released as `failed`), and every chain verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyLedger } from "../../src/core/agreement/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

async function agentWithAgreement(): Promise<{ agentId: string; agreementId: string }> {
  const { agent_id } = await w.registerAgent(w.operatorKey);
  const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 100, cumulative_maximum: 100_000 })] });
  return { agentId: agent_id, agreementId };
}

async function entriesOf(agreementId: string, actionId: string) {
  const a = await loadAgreementWithLedger(w.db.pool, agreementId);
  if (!a) throw new Error(`agreement ${agreementId} is not stored`);
  expect(verifyLedger(a)).toEqual({ state: "ok" });
  return (a.ledger ?? []).filter((e) => e.action_id === actionId);
}

describe("one action_id, many concurrent requests", () => {
  it("the same request 24 times at once: one ALLOW, answered identically to all, one ledger entry", async () => {
    const { agentId, agreementId } = await agentWithAgreement();
    const body = { agent_id: agentId, action: action({ amount: 5 }) };
    const answers = await Promise.all(Array.from({ length: 24 }, () => w.verify(body)));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    const first = answers[0]?.body;
    expect(first).toMatchObject({ verdict: "ALLOW" });
    for (const a of answers) expect(a.body).toEqual(first);
    const entries = await entriesOf(agreementId, String(body.action.action_id));
    expect(entries.map((e) => e.outcome)).toEqual(["allowed"]);
    expect(entries[0]?.entry_hash).toBe((first?.ledger_entry as { entry_hash: string }).entry_hash);
  });

  it("24 different requests with one action_id at once: one answer wins, the others are 409, one spend", async () => {
    const { agentId, agreementId } = await agentWithAgreement();
    const actionId = `act-race-${Date.now()}`;
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => w.verify({ agent_id: agentId, action: action({ action_id: actionId, amount: 1 + i }) })),
    );
    const ok = answers.filter((a) => a.status === 200);
    expect(ok).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.status).toBe(409);
      expect(a.body).toEqual({ error: expect.stringContaining("already used") });
    }
    const entries = await entriesOf(agreementId, actionId);
    const allowed = entries.filter((e) => e.outcome === "allowed");
    const failed = entries.filter((e) => e.outcome === "failed");
    expect(allowed).toHaveLength(1);
    expect(failed).toHaveLength(0);
    expect(allowed[0]?.entry_hash).toBe((ok[0]?.body.ledger_entry as { entry_hash: string }).entry_hash);
  });

  it("an ALLOW and a DENY racing for one action_id: one is answered, the other 409, and no spend survives a DENY", async () => {
    const seen = { ALLOW: 0, DENY: 0 };
    for (let round = 0; round < 12; round++) {
      // A fresh agent per round: a DENY per round stays below the denied-attempt burst.
      const { agentId, agreementId } = await agentWithAgreement();
      const actionId = `act-mixed-${round}-${Date.now()}`;
      const within = { agent_id: agentId, action: action({ action_id: actionId, amount: 10 }) };
      const above = { agent_id: agentId, action: action({ action_id: actionId, amount: 500 }) };
      const bodies = round % 2 === 0 ? [within, above, within, above] : [above, within, above, within];
      const answers = await Promise.all(bodies.map((b) => w.verify(b)));
      const ok = answers.filter((a) => a.status === 200);
      for (const a of answers.filter((x) => x.status !== 200)) expect(a.status, JSON.stringify(a.body)).toBe(409);
      // The two identical requests may both be answered (the same answer); never both verdicts.
      const verdicts = new Set(ok.map((a) => a.body.verdict));
      expect(verdicts.size).toBe(1);
      const verdict = [...verdicts][0] as "ALLOW" | "DENY";
      seen[verdict]++;
      for (const a of ok) expect(a.body).toEqual(ok[0]?.body);
      const entries = await entriesOf(agreementId, actionId);
      const allowed = entries.filter((e) => e.outcome === "allowed").length;
      const failed = entries.filter((e) => e.outcome === "failed").length;
      if (verdict === "ALLOW") {
        expect([allowed, failed]).toEqual([1, 0]);
      } else {
        expect(allowed).toBe(failed); // any spend recorded for a losing ALLOW was released
        expect(allowed).toBeLessThanOrEqual(1);
      }
      // A retry of the winning request gets the same answer.
      const winner = verdict === "ALLOW" ? within : above;
      expect((await w.verify(winner)).body).toEqual(ok[0]?.body);
    }
    expect(seen.ALLOW + seen.DENY).toBe(12);
  }, 60_000);
});
