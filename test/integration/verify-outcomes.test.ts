/**
 * POST /v1/verify/outcomes over real HTTP: later outcomes of an allowed action in the
 * agreement's ledger, replays, refused moves, the release of a failed spend, who may record
 * them (payment-side parties named by the agreement, never the agent's operator), and what a
 * retry of a released action answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signerFromSeed } from "../../src/core/jose/index.js";
import { verifyLedger } from "../../src/core/agreement/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { spendTotals } from "../../src/store/ledger/index.js";
import {
  action,
  mandate,
  paymentParty,
  startVerifyWorld,
  storeAgreement,
  type PaymentParty,
  type VerifyWorld,
  exhaustedBudget,
} from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

const outcome = (body: unknown, token?: string | null) => w.outcome(body, token);

function party(orgType: "merchant" | "bank_issuer" | "wallet" | "processor_psp", role: PaymentParty["role"]): Promise<PaymentParty> {
  return paymentParty(w, orgType, role, signerFromSeed(Buffer.alloc(32, orgType.length + role.length).toString("hex")));
}

describe("POST /v1/verify/outcomes", () => {
  it("appends authorized then settled; a repeat is a replay; a move after a final outcome is a 409", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    const act = action();
    expect((await w.verify({ agent_id, action: act })).body.verdict).toBe("ALLOW");
    const base = { agreement_id: agreementId, action_id: act.action_id };

    const authorized = await outcome({ ...base, outcome: "authorized" });
    expect(authorized.status).toBe(200);
    expect(authorized.body).toMatchObject({
      ...base,
      outcome: "authorized",
      replayed: false,
      entry: { outcome: "authorized", sequence: 2, amount: 10, action_id: act.action_id },
    });
    const again = await outcome({ ...base, outcome: "authorized" });
    expect(again.body).toMatchObject({ replayed: true, entry: { sequence: 2 } });
    expect((await outcome({ ...base, outcome: "settled" })).body).toMatchObject({ replayed: false, entry: { outcome: "settled", sequence: 3 } });
    const late = await outcome({ ...base, outcome: "failed" });
    expect(late).toMatchObject({ status: 409, body: { error: "outcome failed cannot follow settled" } });

    const a = await loadAgreementWithLedger(w.db.pool, agreementId);
    expect(a && verifyLedger(a)).toEqual({ state: "ok" });
    expect(a?.ledger?.map((e) => e.outcome)).toEqual(["allowed", "authorized", "settled"]);
  });

  it("a failed outcome releases the amount: the very next verify on this process sees the room", async () => {
    for (let i = 0; i < 5; i++) {
      const { agent_id, agreementId, first } = await exhaustedBudget(w);
      expect((await outcome({ agreement_id: agreementId, action_id: first.action_id, outcome: "failed" })).status).toBe(200);
      expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW");
      expect((await w.verify({ agent_id, action: action() })).body.reasons).toEqual(["CUMULATIVE_BUDGET_EXCEEDED"]);
    }
  });

  it("a retry of a released action is a 409 telling the caller to use a new action_id; it never answers the old ALLOW nor spends", async () => {
    const { agent_id, agreementId, first } = await exhaustedBudget(w);
    expect((await outcome({ agreement_id: agreementId, action_id: first.action_id, outcome: "failed" })).status).toBe(200);
    const before = await spendTotals(w.db.pool, agreementId);
    const retry = await w.verify({ agent_id, action: first });
    expect(retry.status).toBe(409);
    expect(retry.body.error).toContain(`action_id ${String(first.action_id)} was allowed and then recorded as failed`);
    expect(retry.body.error).toContain("new action_id");
    expect(await spendTotals(w.db.pool, agreementId)).toEqual(before);
    // The freed room is still there for a new action, once.
    expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW");
    expect((await w.verify({ agent_id, action: first })).status).toBe(409);
    const a = await loadAgreementWithLedger(w.db.pool, agreementId);
    expect(a && verifyLedger(a)).toEqual({ state: "ok" });
    expect(a?.ledger?.map((e) => e.outcome)).toEqual(["allowed", "allowed", "failed", "allowed"]);
  });

  it("a retry of a refused action, once room is freed, answers the stored refusal and writes nothing to the ledger", async () => {
    const { agent_id, agreementId, first } = await exhaustedBudget(w);
    const refused = action();
    expect((await w.verify({ agent_id, action: refused })).body.reasons).toEqual(["CUMULATIVE_BUDGET_EXCEEDED"]);
    expect((await outcome({ agreement_id: agreementId, action_id: first.action_id, outcome: "failed" })).status).toBe(200);
    const retry = await w.verify({ agent_id, action: refused });
    expect(retry.body).toMatchObject({ verdict: "DENY", reasons: ["CUMULATIVE_BUDGET_EXCEEDED"] });
    const a = await loadAgreementWithLedger(w.db.pool, agreementId);
    expect(a?.ledger?.filter((e) => e.action_id === refused.action_id)).toEqual([]);
    expect(a?.ledger?.map((e) => e.outcome)).toEqual(["allowed", "allowed", "failed"]);
  });

  it("the bypass of the money-path issue is closed: the operator cannot release its own spend", async () => {
    const { agent_id, agreementId, first } = await exhaustedBudget(w);
    const own = await outcome({ agreement_id: agreementId, action_id: first.action_id, outcome: "failed" }, w.operatorKey);
    expect(own).toMatchObject({ status: 403, body: { error: "API key lacks the scope outcomes:write" } });
    // An operator cannot give itself the scope either.
    const issued = await w.call("POST", `/v1/orgs/${w.operatorOrg}/keys`, w.operatorKey, { name: "outcomes", scopes: ["outcomes:write"] });
    expect(issued.status).toBe(400);
    expect(issued.body.error).toContain("outcomes:write is not allowed for a agent_operator organization");
    expect((await w.verify({ agent_id, action: action() })).body.reasons).toEqual(["CUMULATIVE_BUDGET_EXCEEDED"]);
  });

  it("only the parties the agreement names: merchant, psp or issuer acknowledgements of a current mandate hash, by org id", async () => {
    const merchant = await party("merchant", "merchant");
    const issuer = await party("bank_issuer", "issuer");
    const stranger = await party("processor_psp", "psp");
    const outdated = await party("wallet", "psp");
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, {
      mandates: [mandate(agent_id, "i1")],
      parties: [merchant, issuer],
      // An acknowledgement of an older mandate hash names nobody.
      transform: async (a) => {
        const { acknowledgedBy } = await import("../helpers/verify-world.js");
        const old = await acknowledgedBy({ ...a, mandates: [{ ...a.mandates[0]!, maximum_amount: 99 }] }, [outdated], a.mandates[0]!.expires_at!);
        return { ...a, acknowledgements: [...(a.acknowledgements ?? []), ...(old.acknowledgements ?? []).slice(-1)] };
      },
    });
    const act = action();
    expect((await w.verify({ agent_id, action: act })).body.verdict).toBe("ALLOW");
    const base = { agreement_id: agreementId, action_id: act.action_id };
    for (const p of [stranger, outdated]) {
      expect(await outcome({ ...base, outcome: "authorized" }, p.key)).toMatchObject({ status: 404, body: { error: "agreement was not found" } });
    }
    // The world's default party is not named by this agreement either.
    expect((await outcome({ ...base, outcome: "authorized" })).status).toBe(404);
    expect((await outcome({ ...base, outcome: "authorized" }, merchant.key)).status).toBe(200);
    expect((await outcome({ ...base, outcome: "settled" }, issuer.key)).status).toBe(200);
  });

  it("404 for an unknown agreement or an action never allowed; 400 for a bad outcome", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    expect(await outcome({ agreement_id: "agr-none", action_id: "x", outcome: "settled" })).toMatchObject({
      status: 404,
      body: { error: "agreement was not found" },
    });
    const notAllowed = await outcome({ agreement_id: agreementId, action_id: "never", outcome: "settled" });
    expect(notAllowed.status).toBe(404);
    expect(notAllowed.body.error).toContain("is not recorded as allowed");
    expect((await outcome({ agreement_id: agreementId, action_id: "x", outcome: "allowed" })).status).toBe(400);
    expect((await outcome({ agreement_id: agreementId, outcome: "settled" })).status).toBe(400);
  });
});
