import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, hashOf, hashWithout } from "../../../../src/core/canonical/index.js";
import { toMinor } from "../../../../src/core/money/index.js";
import { AgreementError } from "../../../../src/core/agreement/errors.js";
import {
  appendLedgerEntry,
  ledgerSummary,
  spentByIntent,
  verifyLedger,
  withLedgerEntry,
  type LedgerEntryFields,
} from "../../../../src/core/agreement/ledger.js";
import type { IntentAgreement, LedgerEntry, Mandate } from "../../../../src/core/agreement/types.js";

function mandate(intent_id: string, currency: string): Mandate {
  return { intent_id, principal: { type: "human", id: "prn_1" }, agent: { agent_id: "agt_1" }, currency };
}

const MANDATES = [mandate("int_eur", "EUR"), mandate("int_jpy", "JPY"), mandate("int_kwd", "KWD")];

function agreementWith(ledger: LedgerEntry[] | undefined, mandates: Mandate[] = MANDATES): IntentAgreement {
  return {
    agreement_id: "agr_1",
    status: "active",
    mandates,
    ledger_as_of: "2025-01-10T00:00:00Z",
    events: [],
    ...(ledger ? { ledger, ...ledgerSummary(ledger) } : { ledger_sequence: 0 }),
  };
}

function build(all: LedgerEntryFields[]): LedgerEntry[] {
  const out: LedgerEntry[] = [];
  for (const f of all) out.push(appendLedgerEntry(out, f));
  return out;
}

/** Chains raw entries without any validation, to build records that are wrong in one way only. */
function rawChain(all: Array<Record<string, unknown>>): LedgerEntry[] {
  const out: LedgerEntry[] = [];
  for (const f of all) {
    const last = out[out.length - 1];
    const draft = { ...f, sequence: out.length + 1, ...(last ? { prev_entry_hash: last.entry_hash } : {}) } as LedgerEntry;
    out.push({ ...draft, entry_hash: hashWithout(draft, "entry_hash") });
  }
  return out;
}

const at = (i: number) => `2025-01-05T10:${String(i).padStart(2, "0")}:00Z`;

/**
 * 20 entries: 10 actions, each authorized then settled or failed. Action k belongs to
 * MANDATES[k % 3] (EUR, JPY, KWD in turn); actions 0, 4 and 8 end failed.
 */
function twentyEntries(): LedgerEntryFields[] {
  const out: LedgerEntryFields[] = [];
  for (let i = 0; i < 20; i++) {
    const action = `act_${Math.floor(i / 2)}`;
    const second = i % 2 === 1;
    const mine = MANDATES[Math.floor(i / 2) % 3]!;
    const amount = mine.currency === "JPY" ? 1500 : mine.currency === "KWD" ? 1.125 : 12.34;
    out.push({
      action_id: action,
      at: at(i),
      currency: mine.currency,
      intent_id: mine.intent_id,
      outcome: second ? (Math.floor(i / 2) % 4 === 0 ? "failed" : "settled") : "authorized",
      ...(second ? {} : { amount, idempotency_key: `idem_${i}` }),
    });
  }
  return out;
}

describe("appendLedgerEntry", () => {
  it("numbers, chains and hashes entries", () => {
    const ledger = build(twentyEntries());
    expect(ledger.map((e) => e.sequence)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(ledger[0]!.prev_entry_hash).toBeUndefined();
    for (let i = 1; i < 20; i++) expect(ledger[i]!.prev_entry_hash).toBe(ledger[i - 1]!.entry_hash);
    for (const e of ledger) {
      const { entry_hash: _h, ...rest } = e;
      expect(e.entry_hash).toBe(hashOf(rest));
    }
    expect(ledgerSummary(ledger)).toEqual({ ledger_sequence: 20, ledger_head: ledger[19]!.entry_hash });
    expect(ledgerSummary([])).toEqual({ ledger_sequence: 0 });
  });

  it("refuses fields that could not be verified later", () => {
    const good: LedgerEntryFields = { action_id: "a", at: at(1), currency: "USD", outcome: "allowed", amount: 1.5 };
    const bad: Array<Partial<LedgerEntryFields>> = [
      { action_id: "" },
      { at: "yesterday" },
      { at: "2025-02-30T00:00:00Z" },
      { currency: "usd" },
      { currency: "XYZ1" },
      { outcome: "maybe" as LedgerEntryFields["outcome"] },
      { amount: 1.005 },
      { amount: -1 },
      { amount: Number.NaN },
    ];
    expect(() => appendLedgerEntry([], good)).not.toThrow();
    for (const b of bad) {
      expect(() => appendLedgerEntry([], { ...good, ...b })).toThrowError(expect.objectContaining({ code: "LEDGER_ENTRY_INVALID" }));
    }
  });
});

describe("withLedgerEntry", () => {
  it("appends to the agreement without changing the input", () => {
    const before = agreementWith(build(twentyEntries().slice(0, 3)));
    const snapshot = structuredClone(before);
    const { agreement, entry } = withLedgerEntry(
      before,
      { action_id: "act_new", at: at(30), currency: "JPY", intent_id: "int_jpy", outcome: "allowed", amount: 700 },
      "2025-01-05T10:30:01Z",
    );
    expect(before).toEqual(snapshot);
    expect(entry.sequence).toBe(4);
    expect(agreement.ledger_sequence).toBe(4);
    expect(agreement.ledger_head).toBe(entry.entry_hash);
    expect(agreement.ledger_as_of).toBe("2025-01-05T10:30:01Z");
    expect(verifyLedger(agreement)).toEqual({ state: "ok" });
  });

  it("refuses an omitted ledger, an unknown intent and another currency", () => {
    const f: LedgerEntryFields = { action_id: "x", at: at(1), currency: "EUR", intent_id: "int_eur", outcome: "allowed", amount: 1 };
    const codeOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return e instanceof AgreementError ? e.code : "other";
      }
      return "none";
    };
    expect(codeOf(() => withLedgerEntry(agreementWith(undefined), f))).toBe("LEDGER_UNKNOWN");
    expect(codeOf(() => withLedgerEntry(agreementWith([]), { ...f, intent_id: "int_nope" }))).toBe("LEDGER_ENTRY_INVALID");
    expect(codeOf(() => withLedgerEntry(agreementWith([]), { ...f, currency: "USD" }))).toBe("LEDGER_ENTRY_INVALID");
    const { intent_id: _i, ...noIntent } = f;
    expect(codeOf(() => withLedgerEntry(agreementWith([]), noIntent))).toBe("LEDGER_ENTRY_INVALID");
    expect(codeOf(() => withLedgerEntry(agreementWith([], [mandate("only", "EUR")]), noIntent))).toBe("none");
  });
});

describe("verifyLedger", () => {
  const ledger = () => build(twentyEntries());
  const broken = (a: IntentAgreement) => {
    const s = verifyLedger(a);
    expect(s.state).toBe("broken");
    return s.state === "broken" ? s.problem : "";
  };

  it("accepts an intact ledger and an empty one; reports an omitted one as unknown", () => {
    expect(verifyLedger(agreementWith(ledger()))).toEqual({ state: "ok" });
    expect(verifyLedger(agreementWith([]))).toEqual({ state: "ok" });
    expect(verifyLedger(agreementWith(undefined))).toEqual({ state: "unknown" });
  });

  it("finds a changed amount, a removed entry and a renumbered entry", () => {
    const l = ledger();
    l[7] = { ...l[7]!, amount: 0.01 };
    expect(broken(agreementWith(l))).toMatch(/^ledger entry 7's entry_hash/);
    const removed = ledger();
    removed.splice(5, 1);
    expect(broken({ ...agreementWith(ledger()), ledger: removed, ledger_sequence: 19, ledger_head: removed[18]!.entry_hash })).toMatch(
      /^ledger entry 5 has sequence 7/,
    );
    const tail = ledger().slice(1);
    expect(broken(agreementWith(tail))).toMatch(/^ledger entry 0 has sequence 2/);
    const rewired = rawChain(twentyEntries() as unknown as Array<Record<string, unknown>>);
    rewired[4] = { ...rewired[4]!, prev_entry_hash: rewired[2]!.entry_hash };
    rewired[4] = { ...rewired[4]!, entry_hash: hashWithout(rewired[4]!, "entry_hash") };
    expect(broken(agreementWith(rewired))).toMatch(/^ledger entry 4's prev_entry_hash/);
    const rooted = rawChain([{ action_id: "a", at: at(1), currency: "EUR", intent_id: "int_eur", outcome: "allowed", amount: 1 }]);
    const withPrev = { ...rooted[0]!, prev_entry_hash: hashOf("x") };
    const rehashed = [{ ...withPrev, entry_hash: hashWithout(withPrev, "entry_hash") }];
    expect(broken(agreementWith(rehashed))).toMatch(/^ledger entry 0 has a prev_entry_hash/);
  });

  it("checks ledger_sequence and ledger_head against the entries", () => {
    const l = ledger();
    expect(broken({ ...agreementWith(l), ledger_sequence: 21 })).toMatch(/^ledger_sequence is 21/);
    expect(broken({ ...agreementWith(l), ledger_sequence: 19 })).toMatch(/^ledger_sequence is 19/);
    expect(broken({ ...agreementWith(l), ledger_head: l[18]!.entry_hash })).toMatch(/^ledger_head is not/);
    const { ledger_head: _h, ...noHead } = agreementWith(l);
    expect(broken(noHead)).toMatch(/^ledger_head is not/);
    expect(broken({ ...agreementWith([]), ledger_head: l[0]!.entry_hash })).toMatch(/^ledger_head is present/);
  });

  it("holds entries to their intent's currency and to a live intent", () => {
    const base = { action_id: "a", at: at(1), outcome: "allowed", amount: 5 };
    expect(broken(agreementWith(rawChain([{ ...base, currency: "USD", intent_id: "int_eur" }])))).toMatch(/is in USD but intent "int_eur" is in EUR/);
    expect(broken(agreementWith(rawChain([{ ...base, currency: "EUR", intent_id: "int_gone" }])))).toMatch(/not a live mandate/);
    expect(broken(agreementWith(rawChain([{ ...base, currency: "EUR" }])))).toMatch(/names no intent_id and the agreement holds 3 intents/);
    const single = [mandate("only", "EUR")];
    expect(verifyLedger(agreementWith(rawChain([{ ...base, currency: "EUR" }]), single))).toEqual({ state: "ok" });
    expect(broken(agreementWith(rawChain([{ ...base, currency: "JPY" }]), single))).toMatch(/is in JPY/);
  });

  it("refuses unusable amounts, uncounted new actions, moved actions and ambiguous intents", () => {
    const base = { at: at(1), currency: "JPY", intent_id: "int_jpy" };
    expect(broken(agreementWith(rawChain([{ ...base, action_id: "a", outcome: "allowed", amount: 10.5 }])))).toMatch(/amount 10.5 is not usable in JPY/);
    expect(broken(agreementWith(rawChain([{ ...base, action_id: "a", outcome: "settled" }])))).toMatch(/has no amount and no earlier entry/);
    expect(verifyLedger(agreementWith(rawChain([{ ...base, action_id: "a", outcome: "failed" }])))).toEqual({ state: "ok" });
    const moved = rawChain([
      { ...base, action_id: "a", outcome: "authorized", amount: 10 },
      { action_id: "a", at: at(2), currency: "EUR", intent_id: "int_eur", outcome: "settled", amount: 10 },
    ]);
    expect(broken(agreementWith(moved))).toMatch(/^ledger entry 1 moves action "a"/);
    const dupIntents = [mandate("int_jpy", "JPY"), mandate("int_jpy", "JPY")];
    expect(broken(agreementWith([], dupIntents))).toMatch(/appears twice/);
  });

  it("reports hostile shapes as broken, never throwing", () => {
    const l = ledger();
    expect(broken(agreementWith([null] as unknown as LedgerEntry[]))).toMatch(/^ledger entry 0 is not an object/);
    expect(broken({ ...agreementWith([]), ledger: "x" as unknown as LedgerEntry[] })).toMatch(/not an array/);
    expect(broken(agreementWith(rawChain([{ action_id: "a", at: at(1), currency: "JPY", intent_id: "int_jpy", outcome: "won", amount: 1 }])))).toMatch(
      /unknown outcome/,
    );
    expect(broken(agreementWith(rawChain([{ action_id: "a", at: "soon", currency: "JPY", intent_id: "int_jpy", outcome: "allowed", amount: 1 }])))).toMatch(
      /at is not an RFC 3339/,
    );
    expect(broken({ ...agreementWith(l), mandates: null as unknown as Mandate[] })).toBeTypeOf("string");
  });

  it("detects any one-byte change to the canonical ledger", () => {
    const original = ledger();
    const agreement = agreementWith(original);
    const bytes = Buffer.from(canonicalJson(original), "utf8");
    let runs = 0;
    let valueChanges = 0;
    fc.assert(
      fc.property(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 0, max: 255 }), (pos, value) => {
        runs++;
        const copy = Buffer.from(bytes);
        copy[pos] = value === copy[pos] ? (value + 1) % 256 : value;
        let parsed: unknown;
        try {
          parsed = JSON.parse(new TextDecoder().decode(copy));
        } catch {
          return;
        }
        if (isDeepStrictEqual(parsed, original)) return;
        valueChanges++;
        expect(verifyLedger({ ...agreement, ledger: parsed as LedgerEntry[] }).state).toBe("broken");
      }),
      { numRuns: 200 },
    );
    expect(valueChanges).toBeGreaterThan(runs * 0.25);
  });
});

describe("spentByIntent", () => {
  it("counts only each action's latest entry, in minor units of the intent's currency", () => {
    const spent = spentByIntent(agreementWith(build(twentyEntries())));
    // Actions 0..9 alternate intents EUR, JPY, KWD; actions 0, 4 and 8 end failed (released).
    // EUR: actions 3, 6, 9 settle 12.34 (0 failed); JPY: actions 1, 7 settle (4 failed); KWD: 2, 5 settle (8 failed).
    expect(spent.get("int_eur")).toBe(3n * toMinor(12.34, "EUR"));
    expect(spent.get("int_jpy")).toBe(2n * toMinor(1500, "JPY"));
    expect(spent.get("int_kwd")).toBe(2n * toMinor(1.125, "KWD"));
  });

  it("uses a later amount when given, the earlier one when omitted, and releases failures", () => {
    const base = { at: at(1), currency: "EUR", intent_id: "int_eur" };
    const ledger = build([
      { ...base, action_id: "a", outcome: "authorized", amount: 50 },
      { ...base, action_id: "a", outcome: "settled", amount: 47.5 },
      { ...base, action_id: "b", outcome: "allowed", amount: 20 },
      { ...base, action_id: "b", outcome: "settled" },
      { ...base, action_id: "c", outcome: "allowed", amount: 99.99 },
      { ...base, action_id: "c", outcome: "failed" },
      { ...base, action_id: "d", outcome: "failed", amount: 5 },
      { ...base, action_id: "d", outcome: "allowed" },
    ]);
    const spent = spentByIntent(agreementWith(ledger));
    expect(spent.get("int_eur")).toBe(toMinor(47.5, "EUR") + toMinor(20, "EUR") + toMinor(5, "EUR"));
    expect(spent.get("int_jpy")).toBe(0n);
    expect(spent.get("int_kwd")).toBe(0n);
    // At face value (an imported ledger): a failure releases nothing; each action counts its amount in force.
    const face = spentByIntent(agreementWith(ledger), { releases: false });
    expect(face.get("int_eur")).toBe(toMinor(47.5, "EUR") + toMinor(20, "EUR") + toMinor(99.99, "EUR") + toMinor(5, "EUR"));
  });

  it("attributes entries without intent_id to the only mandate and is empty without a ledger", () => {
    const single = [mandate("only", "USD")];
    const ledger = build([
      { action_id: "a", at: at(1), currency: "USD", outcome: "allowed", amount: 0.1 },
      { action_id: "b", at: at(2), currency: "USD", outcome: "allowed", amount: 0.2 },
    ]);
    expect(spentByIntent(agreementWith(ledger, single)).get("only")).toBe(toMinor("0.3", "USD"));
    expect(spentByIntent(agreementWith(undefined)).get("int_eur")).toBe(0n);
    expect(spentByIntent(agreementWith([null, 7] as unknown as LedgerEntry[])).get("int_eur")).toBe(0n);
  });
});
