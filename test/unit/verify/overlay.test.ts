import { describe, expect, it } from "vitest";
import { prepareAgreement, spentByIntent, type IntentAgreement } from "../../../src/core/agreement/index.js";
import { evaluate } from "../../../src/core/evaluate/index.js";
import { prepareDelegation } from "../../../src/core/delegation/index.js";
import { splitAgreement } from "../../../src/store/agreements.js";
import { agreementForPreparation, withLedgerTotals } from "../../../src/verify/caches/overlay.js";
import { action, agreement, context, delegation, mandates, T0 } from "../../fixtures/records.js";

async function overlaid(a: IntentAgreement, asOfMs: number) {
  const base = await prepareAgreement(agreementForPreparation(splitAgreement(a).record));
  const snapshot = structuredClone(base);
  const out = withLedgerTotals(base, { ledgerSequence: a.ledger_sequence, ledgerHead: a.ledger_head, spent: spentByIntent(a), asOfMs });
  expect(base).toEqual(snapshot); // the cached base is never changed
  return out;
}

describe("withLedgerTotals", () => {
  it("gives the facts a full preparation of the agreement with its ledger gives", async () => {
    for (const n of [0, 1, 7, 40]) {
      const a = { ...(await agreement({ ledgerEntries: n })), ledger_as_of: new Date(T0).toISOString() };
      const full = await prepareAgreement(a, { now: T0 });
      const fast = await overlaid(a, T0);
      expect(fast.mandates.map((m) => m.spentMinor)).toEqual(full.mandates.map((m) => m.spentMinor));
      expect(fast.mandates.map((m) => m.signature)).toEqual(full.mandates.map((m) => m.signature));
      expect(fast.totalSpentMinor).toBe(full.totalSpentMinor);
      expect(fast.ledger).toEqual(full.ledger);
      expect(fast.ledgerSequence).toBe(full.ledgerSequence);
      expect(fast.ledgerAsOfMs).toBe(full.ledgerAsOfMs);
      expect(fast.revocation).toEqual(full.revocation);
      expect(fast.agreement.ledger_head).toBe(a.ledger_head);
      expect(fast.agreement.ledger).toBeUndefined();
    }
  });

  it("evaluates to the same decisions as the full preparation, budgets included", async () => {
    // The groceries slice is 2000 USD: 40 spends of 5 leave room; a large action does not fit.
    const ms = mandates().map((m) => (m.intent_id === "groceries" ? { ...m, cumulative_maximum: 250 } : m));
    const a = { ...(await agreement({ ledgerEntries: 40, mandates: ms })), ledger_as_of: new Date(T0).toISOString() };
    const d = prepareDelegation(delegation(a));
    const full = await prepareAgreement(a, { now: T0 });
    const fast = await overlaid(a, T0);
    for (const amount of [10, 150, 199]) {
      const act = action({ amount, intent_id: "groceries" });
      expect(evaluate(d, fast, act, context())).toEqual(evaluate(d, full, act, context()));
    }
    expect(evaluate(d, fast, action({ amount: 199, intent_id: "groceries" }), context()).reasons).toContain("CUMULATIVE_BUDGET_EXCEEDED");
  });

  it("keeps a broken ledger state that comes from the record itself", async () => {
    const a = await agreement();
    const dup = { ...a, mandates: [a.mandates[0], a.mandates[0]] } as IntentAgreement;
    const fast = await overlaid(dup, T0);
    expect(fast.ledger.state).toBe("broken");
  });
});
