import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { appendLedgerEntry, type LedgerEntry, type LedgerEntryFields } from "../../../src/core/agreement/index.js";
import { RecordStoreError } from "../../../src/store/record-errors.js";
import { nextLedgerEntry } from "../../../src/store/ledger/index.js";

const fieldsArb: fc.Arbitrary<LedgerEntryFields> = fc.record(
  {
    action_id: fc.string({ minLength: 1, maxLength: 12 }),
    at: fc.integer({ min: 0, max: 4_000_000_000_000 }).map((ms) => new Date(ms).toISOString()),
    currency: fc.constantFrom("USD", "EUR", "JPY", "KWD"),
    outcome: fc.constantFrom("allowed" as const, "authorized" as const, "settled" as const, "failed" as const),
    amount: fc.integer({ min: 0, max: 1_000_000 }),
    intent_id: fc.constantFrom("i1", "i2"),
    idempotency_key: fc.string({ maxLength: 8 }),
  },
  { requiredKeys: ["action_id", "at", "currency", "outcome"] },
);

describe("nextLedgerEntry", () => {
  it("equals the core's appendLedgerEntry given only the ledger's sequence and head", () => {
    fc.assert(
      fc.property(fc.array(fieldsArb, { maxLength: 12 }), fieldsArb, (history, next) => {
        const ledger: LedgerEntry[] = [];
        for (const f of history) ledger.push(appendLedgerEntry(ledger, f));
        const state = { sequence: ledger.length, head: ledger.at(-1)?.entry_hash };
        expect(nextLedgerEntry(state, next)).toEqual(appendLedgerEntry(ledger, next));
      }),
      { numRuns: 150 },
    );
  });

  it("ignores chain fields a caller passes in", () => {
    const f = { action_id: "a", at: "2026-01-01T00:00:00Z", currency: "USD", outcome: "allowed" as const, amount: 1 };
    const smuggled = { ...f, sequence: 99, entry_hash: "sha256:" + "0".repeat(64), prev_entry_hash: "sha256:" + "1".repeat(64) } as LedgerEntryFields;
    expect(nextLedgerEntry({ sequence: 0, head: undefined }, smuggled)).toEqual(appendLedgerEntry([], f));
  });

  it("refuses what the core refuses, and an inconsistent state", () => {
    const ok = { action_id: "a", at: "2026-01-01T00:00:00Z", currency: "USD", outcome: "allowed" as const, amount: 1 };
    const bad: LedgerEntryFields[] = [
      { ...ok, action_id: "" },
      { ...ok, at: "2026-02-30T00:00:00Z" },
      { ...ok, currency: "usd" },
      { ...ok, amount: 1.005 },
      { ...ok, outcome: "reversed" as never },
    ];
    for (const f of bad) expect(() => nextLedgerEntry({ sequence: 0, head: undefined }, f)).toThrow(RecordStoreError);
    expect(() => nextLedgerEntry({ sequence: 1, head: undefined }, ok)).toThrow(RecordStoreError);
    expect(() => nextLedgerEntry({ sequence: 0, head: `sha256:${"a".repeat(64)}` }, ok)).toThrow(RecordStoreError);
    expect(() => nextLedgerEntry({ sequence: -1, head: undefined }, ok)).toThrow(RecordStoreError);
  });
});
