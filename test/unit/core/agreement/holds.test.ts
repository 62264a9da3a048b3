/**
 * The hold rules (src/core/agreement/holds.ts) and what the ledger's verifier and counting make
 * of hold steps (src/core/agreement/ledger.ts): captures within the hold, the rest released
 * exactly, voids, expiries, refunds within the captures, idempotent steps, and a random walk
 * that checks captures <= hold, refunds <= captured and counted = hold - released after every step.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { actionState, countedOf, emptyActionState, holdStep, applyEntry, type HoldRequest } from "../../../../src/core/agreement/holds.js";
import { appendLedgerEntry, ledgerSummary, spentByIntent, verifyLedger, type LedgerEntryFields } from "../../../../src/core/agreement/ledger.js";
import type { IntentAgreement, LedgerEntry } from "../../../../src/core/agreement/types.js";
import { minorToNumber } from "../../../../src/core/money/index.js";

const allowed = (amountMinor: bigint) => ({ outcome: "allowed" as const, amountMinor });

function apply(hold: bigint, ...reqs: HoldRequest[]) {
  const s = emptyActionState();
  expect(applyEntry(s, allowed(hold))).toBeUndefined();
  const decisions = [];
  for (const r of reqs) {
    const d = holdStep(s, r);
    decisions.push(d);
    if (d.kind === "append") for (const st of d.steps) expect(applyEntry(s, { ...st, idempotencyKey: st.key })).toBeUndefined();
  }
  return { s, decisions };
}

describe("holdStep", () => {
  it("partial captures up to the hold; a final one releases the rest exactly", () => {
    const { s, decisions } = apply(
      1000n,
      { kind: "captured", key: "c1", amountMinor: 300n, final: false },
      { kind: "captured", key: "c2", amountMinor: 450n, final: true },
    );
    expect(decisions[0]).toEqual({ kind: "append", steps: [{ outcome: "captured", amountMinor: 300n, key: "c1" }], releaseMinor: 0n });
    expect(decisions[1]).toEqual({
      kind: "append",
      steps: [
        { outcome: "captured", amountMinor: 450n, final: true, key: "c2" },
        { outcome: "released", amountMinor: 250n, cause: "capture", key: "c2" },
      ],
      releaseMinor: 250n,
    });
    expect(s).toMatchObject({ hold: 1000n, captured: 750n, released: 250n, open: false });
    expect(countedOf(s)).toBe(750n);
  });

  it("refuses a capture beyond the hold, and any capture once closed", () => {
    const { s, decisions } = apply(
      1000n,
      { kind: "captured", key: "c1", amountMinor: 1001n, final: false },
      { kind: "captured", key: "c2", amountMinor: 1000n, final: false },
    );
    expect(decisions[0]).toEqual({ kind: "refused", code: "CAPTURE_EXCEEDS_HOLD", heldMinor: 1000n, capturedMinor: 0n });
    // Reaching the hold closes it (final), nothing left to release.
    expect(decisions[1]).toMatchObject({ kind: "append", steps: [{ outcome: "captured", final: true }], releaseMinor: 0n });
    expect(holdStep(s, { kind: "captured", key: "c3", amountMinor: 1n, final: false })).toEqual({
      kind: "refused",
      code: "OUTCOME_NOT_ALLOWED",
      current: "captured",
    });
    expect(holdStep(s, { kind: "voided" })).toEqual({ kind: "refused", code: "OUTCOME_NOT_ALLOWED", current: "captured" });
  });

  it("a repeated step is a replay; another step under the same key is a conflict", () => {
    const { s } = apply(1000n, { kind: "captured", key: "c1", amountMinor: 300n, final: false });
    expect(holdStep(s, { kind: "captured", key: "c1", amountMinor: 300n, final: false })).toEqual({ kind: "replay", outcome: "captured", key: "c1" });
    expect(holdStep(s, { kind: "captured", key: "c1", amountMinor: 301n, final: false })).toEqual({ kind: "refused", code: "STEP_CONFLICT" });
    expect(holdStep(s, { kind: "captured", key: "c1", amountMinor: 300n, final: true })).toEqual({ kind: "refused", code: "STEP_CONFLICT" });
  });

  it("void and expiry release what is not captured; a repeat is a replay; one after the other is refused", () => {
    const { s, decisions } = apply(1000n, { kind: "captured", key: "c1", amountMinor: 100n, final: false }, { kind: "voided" });
    expect(decisions[1]).toEqual({ kind: "append", steps: [{ outcome: "voided", amountMinor: 900n, key: undefined }], releaseMinor: 900n });
    expect(holdStep(s, { kind: "voided" })).toEqual({ kind: "replay", outcome: "voided", key: undefined });
    expect(holdStep(s, { kind: "expired" })).toEqual({ kind: "refused", code: "OUTCOME_NOT_ALLOWED", current: "voided" });
    expect(countedOf(s)).toBe(100n);
    const e = apply(500n, { kind: "expired" });
    expect(e.decisions[0]).toMatchObject({ kind: "append", releaseMinor: 500n });
    expect(countedOf(e.s)).toBe(0n);
  });

  it("refunds never exceed the captures; they give budget back only when the grant says so", () => {
    const kept = apply(
      1000n,
      { kind: "captured", key: "c1", amountMinor: 600n, final: true },
      { kind: "refunded", key: "r1", amountMinor: 200n, restore: false },
      { kind: "refunded", key: "r2", amountMinor: 401n, restore: false },
    );
    expect(kept.decisions[2]).toEqual({ kind: "refused", code: "REFUND_EXCEEDS_CAPTURED", capturedMinor: 600n, refundedMinor: 200n });
    expect(countedOf(kept.s)).toBe(600n);
    const restored = apply(
      1000n,
      { kind: "captured", key: "c1", amountMinor: 600n, final: true },
      { kind: "refunded", key: "r1", amountMinor: 200n, restore: true },
    );
    expect(restored.decisions[1]).toMatchObject({
      steps: [{ outcome: "refunded" }, { outcome: "released", cause: "refund", amountMinor: 200n }],
      releaseMinor: 200n,
    });
    expect(countedOf(restored.s)).toBe(400n);
    // Nothing captured: nothing to refund.
    expect(apply(1000n, { kind: "refunded", key: "r", amountMinor: 1n, restore: true }).decisions[0]).toMatchObject({
      kind: "refused",
      code: "OUTCOME_NOT_ALLOWED",
    });
  });

  it("the seed's outcomes stop once a hold step is recorded, and a settled hold counts as captured in full", () => {
    const s = emptyActionState();
    applyEntry(s, allowed(1000n));
    applyEntry(s, { outcome: "settled", amountMinor: undefined });
    expect(holdStep(s, { kind: "refunded", key: "r", amountMinor: 1000n, restore: false })).toMatchObject({ kind: "append" });
    const t = actionState([allowed(10n), { outcome: "captured", amountMinor: 5n, idempotencyKey: "k" }, { outcome: "failed", amountMinor: undefined }]);
    expect(t.problem).toBe("outcome failed cannot follow captured");
  });

  it("random walks keep captures <= hold, refunds <= captured, counted = hold - released >= 0", () => {
    const req = fc.oneof(
      fc.record({ kind: fc.constant("captured" as const), key: fc.constantFrom("a", "b", "c"), amountMinor: fc.bigInt(0n, 600n), final: fc.boolean() }),
      fc.constant({ kind: "voided" as const }),
      fc.constant({ kind: "expired" as const }),
      fc.record({ kind: fc.constant("refunded" as const), key: fc.constantFrom("x", "y"), amountMinor: fc.bigInt(1n, 600n), restore: fc.boolean() }),
    );
    fc.assert(
      fc.property(fc.bigInt(0n, 1000n), fc.array(req, { maxLength: 12 }), (hold, reqs) => {
        const s = emptyActionState();
        applyEntry(s, allowed(hold));
        const entries = [allowed(hold)] as Parameters<typeof actionState>[0][number][];
        for (const r of reqs) {
          const d = holdStep(s, r);
          if (d.kind !== "append") continue;
          for (const st of d.steps) {
            const e = {
              outcome: st.outcome,
              amountMinor: st.amountMinor,
              ...(st.final ? { final: true } : {}),
              ...(st.cause ? { cause: st.cause } : {}),
              idempotencyKey: st.key,
            };
            expect(applyEntry(s, e)).toBeUndefined();
            entries.push(e);
          }
          expect(s.captured <= s.hold).toBe(true);
          expect(s.refunded <= s.captured).toBe(true);
          expect(countedOf(s) >= 0n && countedOf(s) <= s.hold).toBe(true);
          // What a verifier recomputes from the entries is the same state.
          expect(countedOf(actionState(entries).state)).toBe(countedOf(s));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("ledgers with hold steps", () => {
  const mandates = [{ intent_id: "i", principal: { type: "human" as const, id: "p" }, agent: { agent_id: "a" }, currency: "EUR" }];
  const agreement = (ledger: LedgerEntry[]): IntentAgreement => ({
    agreement_id: "agr",
    status: "active",
    mandates,
    events: [],
    ledger,
    ...ledgerSummary(ledger),
    ledger_as_of: "2026-01-01T00:00:00Z",
  });
  const at = "2026-01-01T00:00:00Z";
  function build(all: Partial<LedgerEntryFields>[]): LedgerEntry[] {
    const out: LedgerEntry[] = [];
    for (const f of all)
      out.push(appendLedgerEntry(out, { action_id: "a1", at, currency: "EUR", outcome: "allowed", intent_id: "i", ...f } as LedgerEntryFields));
    return out;
  }

  it("verifies and counts a hold, a partial capture, the final capture's release and a restoring refund", () => {
    const ledger = build([
      { amount: 10 },
      { outcome: "captured", amount: 3, idempotency_key: "c1" },
      { outcome: "captured", amount: 4.5, final: true, idempotency_key: "c2" },
      { outcome: "released", amount: 2.5, cause: "capture", idempotency_key: "c2" },
      { outcome: "refunded", amount: 1, idempotency_key: "r1" },
      { outcome: "released", amount: 1, cause: "refund", idempotency_key: "r1" },
      { action_id: "a2", amount: 5 },
      { action_id: "a2", outcome: "expired", amount: 5 },
    ]);
    expect(verifyLedger(agreement(ledger))).toEqual({ state: "ok" });
    expect(spentByIntent(agreement(ledger)).get("i")).toBe(650n);
  });

  it("a verifier refuses a capture beyond the hold, a release that is not the exact rest, a refund beyond the captures", () => {
    expect(verifyLedger(agreement(build([{ amount: 10 }, { outcome: "captured", amount: 11 }])))).toMatchObject({
      state: "broken",
      problem: "ledger entry 1: captures exceed the hold",
    });
    expect(
      verifyLedger(agreement(build([{ amount: 10 }, { outcome: "captured", amount: 4, final: true }, { outcome: "released", amount: 5, cause: "capture" }]))),
    ).toMatchObject({
      state: "broken",
    });
    expect(verifyLedger(agreement(build([{ amount: 10 }, { outcome: "captured", amount: 4, final: true }])))).toMatchObject({ state: "broken" });
    expect(verifyLedger(agreement(build([{ amount: 10 }, { outcome: "voided", amount: 9 }])))).toMatchObject({ state: "broken" });
    expect(verifyLedger(agreement(build([{ amount: 10 }, { outcome: "captured", amount: 2 }, { outcome: "refunded", amount: 3 }])))).toMatchObject({
      state: "broken",
      problem: "ledger entry 2: refunds exceed the captures",
    });
  });

  it("the seed's ledgers count as before", () => {
    const ledger = build([
      { amount: 10 },
      { outcome: "authorized" },
      { outcome: "settled" },
      { action_id: "b", amount: 2 },
      { action_id: "b", outcome: "failed" },
    ]);
    expect(verifyLedger(agreement(ledger))).toEqual({ state: "ok" });
    expect(spentByIntent(agreement(ledger)).get("i")).toBe(1000n);
    expect(minorToNumber(1000n, "EUR")).toBe(10);
  });
});
