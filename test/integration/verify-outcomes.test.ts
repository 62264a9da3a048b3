/**
 * POST /v1/verify/outcomes over real HTTP: later outcomes of an allowed action in the
 * agreement's ledger, replays, refused moves, the release of a failed spend, tenancy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyLedger } from "../../src/core/agreement/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld, exhaustedBudget } from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

const outcome = (body: unknown, token?: string | null) => w.call("POST", "/v1/verify/outcomes", token === undefined ? w.operatorKey : token, body);

describe("POST /v1/verify/outcomes", () => {
  it("appends authorized then settled; a repeat is a replay; a move after a final outcome is a 409", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    const act = action();
    expect((await w.verify({ agent_id, action: act })).body.verdict).toBe("ALLOW");
    const base = { agreement_id: agreementId, action_id: act.action_id };

    const authorized = await outcome({ ...base, outcome: "authorized" });
    expect(authorized.status).toBe(200);
    expect(authorized.body).toMatchObject({ ...base, outcome: "authorized", replayed: false, entry: { outcome: "authorized", sequence: 2, amount: 10, action_id: act.action_id } });
    const again = await outcome({ ...base, outcome: "authorized" });
    expect(again.body).toMatchObject({ replayed: true, entry: { sequence: 2 } });
    expect((await outcome({ ...base, outcome: "settled" })).body).toMatchObject({ replayed: false, entry: { outcome: "settled", sequence: 3 } });
    const late = await outcome({ ...base, outcome: "failed" });
    expect(late).toMatchObject({ status: 409, body: { error: "outcome failed cannot follow settled" } });

    const a = await loadAgreementWithLedger(w.db.pool, agreementId);
    expect(a && verifyLedger(a)).toEqual({ state: "ok" });
    expect(a?.ledger?.map((e) => e.outcome)).toEqual(["allowed", "authorized", "settled"]);
  });

  it("a failed outcome releases the amount from the budget", async () => {
    const { agent_id, agreementId, first } = await exhaustedBudget(w);
    expect((await outcome({ agreement_id: agreementId, action_id: first.action_id, outcome: "failed" })).status).toBe(200);
    expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW");
  });

  it("404 for an unknown agreement, another organization's agreement, or an action never allowed; 400 for a bad outcome", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    expect(await outcome({ agreement_id: "agr-none", action_id: "x", outcome: "settled" })).toMatchObject({ status: 404, body: { error: "agreement was not found" } });
    const notAllowed = await outcome({ agreement_id: agreementId, action_id: "never", outcome: "settled" });
    expect(notAllowed.status).toBe(404);
    expect(notAllowed.body.error).toContain("is not recorded as allowed");
    const other = await w.createOrg("agent_operator");
    const { token } = await w.issueKey(other);
    expect(await outcome({ agreement_id: agreementId, action_id: "never", outcome: "settled" }, token)).toMatchObject({ status: 404, body: { error: "agreement was not found" } });
    expect((await outcome({ agreement_id: agreementId, action_id: "x", outcome: "allowed" })).status).toBe(400);
    expect((await outcome({ agreement_id: agreementId, outcome: "settled" })).status).toBe(400);
  });
});
