import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { prepareAgreement } from "../../../../src/core/agreement/index.js";
import { prepareDelegation } from "../../../../src/core/delegation/index.js";
import { evaluate, type PreparedAgreement, type PreparedDelegation } from "../../../../src/core/evaluate/index.js";
import { importOpenPaymentMandate } from "../../../../src/core/mandates/index.js";
import { generateSigner } from "../../../../src/core/jose/index.js";
import * as F from "../../../fixtures/records.js";

let pa: PreparedAgreement;
let pd: PreparedDelegation;
beforeAll(async () => {
  const a = await F.agreement({ ledgerEntries: 200 });
  pa = await prepareAgreement(a, { now: F.T0 });
  pd = prepareDelegation(F.delegation(a));
});

describe("decisions", () => {
  it("maps DENY to BLOCK with the deciding reason's required action", () => {
    const d = evaluate(pd, pa, F.action({ amount: 5000 }), F.context());
    expect(d.verdict).toBe("DENY");
    expect(d.svc_decision).toBe("BLOCK");
    expect(d.reasons).toContain("AMOUNT_ABOVE_DELEGATION_CEILING");
  });
  it("STEP_UP keeps its name and asks for the principal", () => {
    const d = evaluate(pd, pa, F.action({ intent_id: "groceries" }), F.context({ riskScore: 80 }));
    expect(d).toMatchObject({ verdict: "STEP_UP", svc_decision: "STEP_UP", reasons: ["RISK_SCORE_ABOVE_LIMIT"], required_action: "PRINCIPAL_CONFIRMATION" });
  });
  it("an approval clears exactly its STEP_UP reasons and never a DENY (approvedReasons)", () => {
    const cleared = new Set(["RISK_SCORE_ABOVE_LIMIT", "AMOUNT_ABOVE_INTENT_CEILING"] as const);
    const approved = evaluate(pd, pa, F.action({ intent_id: "groceries" }), F.context({ riskScore: 80, approvedReasons: cleared }));
    expect(approved).toMatchObject({ verdict: "ALLOW", reasons: [] });
    // A DENY reason stays even when it is named (only STEP_UP findings are ever cleared).
    const above = evaluate(pd, pa, F.action({ intent_id: "groceries", amount: 250 }), F.context({ riskScore: 80, approvedReasons: cleared }));
    expect(above).toMatchObject({ verdict: "DENY", reasons: ["AMOUNT_ABOVE_INTENT_CEILING"] });
    // Reasons the approval did not name stay.
    const other = evaluate(pd, pa, F.action({ intent_id: "groceries" }), F.context({ riskScore: 80, approvedReasons: new Set(["INTENT_DRIFT"] as const) }));
    expect(other.reasons).toEqual(["RISK_SCORE_ABOVE_LIMIT"]);
  });
  it("DENY outranks STEP_UP", () => {
    const d = evaluate(pd, pa, F.action({ intent_id: "groceries", amount: 250 }), F.context({ riskScore: 80 }));
    expect(d.verdict).toBe("DENY");
    expect(d.reasons).toEqual(expect.arrayContaining(["RISK_SCORE_ABOVE_LIMIT", "AMOUNT_ABOVE_INTENT_CEILING"]));
  });
  it("decides REVOKE past the risk threshold", () => {
    const d = evaluate(pd, pa, F.action(), F.context({ riskScore: 97 }));
    expect(d).toMatchObject({ verdict: "DENY", svc_decision: "REVOKE", required_action: "REVOKE_DELEGATION" });
  });
  it("picks the intent that authorizes the action when none is named", () => {
    const travel = evaluate(pd, pa, F.action({ amount: 650, category: "travel", merchant: "m-air" }), F.context());
    expect(travel).toMatchObject({ verdict: "ALLOW", intent_id: "travel", amount_minor: 65000n });
    const office = evaluate(pd, pa, F.action({ amount: 12, category: "office", merchant: "m-office", item: "toner" }), F.context());
    expect(office).toMatchObject({ verdict: "ALLOW", intent_id: "office" });
  });
  it("reports the closest intent when none authorizes", () => {
    const d = evaluate(pd, pa, F.action({ amount: 900, category: "travel", merchant: "m-air" }), F.context());
    expect(d.verdict).toBe("DENY");
    expect(d.intent_id).toBe("travel");
    expect(d.reasons).toEqual(["AMOUNT_ABOVE_INTENT_CEILING"]);
  });
  it("is deterministic", () => {
    const a = evaluate(pd, pa, F.action({ amount: 250 }), F.context());
    const b = evaluate(pd, pa, F.action({ amount: 250 }), F.context());
    expect(b).toEqual(a);
  });
  it("free text never blocks", () => {
    const d = evaluate(pd, pa, F.action({ intent_id: "groceries" }), F.context());
    expect(d.verdict).toBe("ALLOW");
    expect(pa.mandates[0]?.mandate.purpose).toBe("weekly groceries");
  });
  it("never allows an amount above every ceiling (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), fc.constantFrom("groceries", "travel", "office", undefined), (cents, intent) => {
        const amount = cents / 100;
        const d = evaluate(pd, pa, F.action({ amount, ...(intent ? { intent_id: intent } : {}) }), F.context());
        const ceiling = { groceries: 200, travel: 800, office: 300 }[d.intent_id as "groceries"] ?? 0;
        if (d.verdict === "ALLOW") expect(cents).toBeLessThanOrEqual(ceiling * 100);
      }),
      { numRuns: 200 },
    );
  });
});

describe("open mandates as evidence", () => {
  it("evaluates an imported AP2 mandate without an agreement", () => {
    const agentKey = generateSigner("EdDSA");
    const claims = {
      vct: "mandate.payment.open.1",
      cnf: { jwk: agentKey.publicJwk },
      iat: Math.floor((F.T0 - 3600_000) / 1000),
      exp: Math.floor((F.T0 + 3600_000) / 1000),
      constraints: [
        { type: "payment.amount_range", currency: "USD", max: 5000 },
        { type: "payment.reference", conditional_transaction_id: "tx-1" },
      ],
    };
    let d;
    try {
      d = importOpenPaymentMandate(claims, { agentKey: agentKey.publicJwk, principal: { type: "human", id: "prn_1" }, delegationId: "del-ap2", now: F.T0 });
    } catch (e) {
      throw new Error(`import failed: ${String(e)}`);
    }
    const prepared = prepareDelegation(d);
    const ok = evaluate(prepared, undefined, F.action({ agent_id: d.agent.agent_id, amount: 50 }), F.context());
    expect(ok.reasons).not.toContain("AMOUNT_ABOVE_DELEGATION_CEILING");
    // Evaluated alone, the amount is given in the scope's currency (what a recorded mandate's ledger spends).
    expect(ok.amount_minor).toBe(5000n);
    expect(ok.intent_id).toBeUndefined();
    const over = evaluate(prepared, undefined, F.action({ agent_id: d.agent.agent_id, amount: 50.01 }), F.context());
    expect(over.reasons).toContain("AMOUNT_ABOVE_DELEGATION_CEILING");
    const late = evaluate(prepared, undefined, F.action({ agent_id: d.agent.agent_id, amount: 5 }), F.context({ now: F.T0 + 3600_000 }));
    expect(late.reasons).toContain("DELEGATION_EXPIRED");
  });
});
