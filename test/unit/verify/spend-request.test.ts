import { describe, expect, it } from "vitest";
import { prepareDelegation } from "../../../src/core/delegation/index.js";
import { evaluate } from "../../../src/core/evaluate/index.js";
import { parseRate } from "../../../src/core/money/index.js";
import { splitAgreement } from "../../../src/store/agreements.js";
import { RecordStoreError } from "../../../src/store/record-errors.js";
import type { ActiveAgreementRow } from "../../../src/store/agreements-read.js";
import { RecordCache } from "../../../src/verify/caches/record-cache.js";
import type { VerifyCandidate } from "../../../src/verify/caches/candidates.js";
import { withLedgerTotals } from "../../../src/verify/caches/overlay.js";
import { allowedSpendFor } from "../../../src/verify/pipeline/spend-request.js";
import { action, agreement, context, delegation, T0 } from "../../fixtures/records.js";

async function candidate(): Promise<VerifyCandidate> {
  const a = await agreement();
  const base = await new RecordCache().agreement("agr-1", 1, () => splitAgreement(a).record);
  return {
    agreementId: "agr-1",
    revision: 1,
    orgId: null,
    agreement: withLedgerTotals(base, { ledgerSequence: 0, ledgerHead: undefined, spent: new Map(), asOfMs: T0 }),
    delegation: prepareDelegation(delegation(a)),
    row: {} as ActiveAgreementRow,
  };
}

describe("allowedSpendFor", () => {
  it("records the decision's intent and amount with every cumulative limit that applies", async () => {
    const c = await candidate();
    const act = action({ amount: 42.5 });
    const decision = evaluate(c.delegation!, c.agreement, act, context());
    expect(decision.verdict).toBe("ALLOW");
    const body = { verdict: "ALLOW" };
    expect(
      allowedSpendFor(c, act, decision, { at: "2026-06-01T10:00:00Z", decision: { agentId: "a", requestHash: `sha256:${"0".repeat(64)}`, body } }),
    ).toEqual({
      agreementId: "agr-1",
      intentId: "groceries",
      actionId: "act-new",
      amountMinor: 4250n,
      currency: "USD",
      at: "2026-06-01T10:00:00Z",
      // The revision the candidate was prepared at: its intent's currency is the spend's.
      revision: c.revision,
      limits: {
        sliceMinor: 200_000n,
        parentCumulativeMinor: 600_000n,
        delegation: { delegationId: "del-1", cumulativeMinor: 1_000_000n, currency: "USD", amountMinor: 4250n },
        // The fixture's delegation has a 3-link chain: every stored ancestor's budget is re-checked in the spend.
        chain: { delegationId: "del-1", ancestorIds: ["del-link-1", "del-link-2", "del-link-3"], currency: "USD", amountMinor: 4250n },
      },
      decision: { agentId: "a", requestHash: `sha256:${"0".repeat(64)}`, body },
    });
  });

  it("converts the amount into the delegation's currency with the evaluation's rate, rounding up", async () => {
    const c = await candidate();
    const d = c.delegation!;
    c.delegation = { ...d, scope: { ...d.scope, scope: { ...d.scope.scope, currency: "EUR" } } };
    const act = action({ amount: 10, currency: "USD" });
    const decision = { ...evaluate(d, c.agreement, act, context()), verdict: "ALLOW" as const };
    const rate = (from: string, to: string) => (from === "USD" && to === "EUR" ? parseRate("0.333") : undefined);
    expect(allowedSpendFor(c, act, decision, { at: "2026-06-01T10:00:00Z", rate }).limits?.delegation).toMatchObject({ currency: "EUR", amountMinor: 333n });
    expect(() => allowedSpendFor(c, act, decision, { at: "2026-06-01T10:00:00Z" })).toThrow(RecordStoreError);
  });

  it("refuses anything but an ALLOW with an intent and an amount", async () => {
    const c = await candidate();
    const act = action({ amount: 5000 });
    const denied = evaluate(c.delegation!, c.agreement, act, context());
    expect(denied.verdict).toBe("DENY");
    expect(() => allowedSpendFor(c, act, denied, { at: "2026-06-01T10:00:00Z" })).toThrow(RecordStoreError);
  });
});
