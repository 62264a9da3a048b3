import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../../src/core/canonical/index.js";
import { generateSigner, signerFromSeed, type Signer } from "../../../../src/core/jose/index.js";
import { toMinor } from "../../../../src/core/money/index.js";
import {
  amendMandate,
  buildEvent,
  mandateHash,
  prepareAgreement,
  signAcknowledgement,
  signMandate,
  signRevocation,
  statusFromEvents,
  withLedgerEntry,
  type AgreementEvent,
  type EventType,
  type IntentAgreement,
  type LedgerEntryFields,
  type Mandate,
} from "../../../../src/core/agreement/index.js";

const AGR = "agr_full";
const merchant = generateSigner("ES256");
const psp = signerFromSeed("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb");

function draft(intent_id: string, fields: Partial<Mandate>): Mandate {
  return {
    intent_id,
    principal: { type: "human", id: "prn_ada" },
    agent: { agent_id: "agt_shopper" },
    currency: "EUR",
    rendering: `${intent_id} as shown to the principal`,
    ...fields,
  };
}

function event(
  events: AgreementEvent[],
  type: EventType,
  mandate_hash: AgreementEvent["mandate_hash"],
  role: AgreementEvent["actor"]["role"],
): AgreementEvent[] {
  const i = events.length;
  return [
    ...events,
    buildEvent(events[i - 1], {
      event_id: `evt_${i}`,
      type,
      at: `2025-01-0${1 + Math.min(i, 8)}T09:00:00Z`,
      actor: { role, id: `${role}_1` },
      agreement_id: AGR,
      mandate_hash,
    }),
  ];
}

/** The ledger: [action, intent, outcome, amount?] — 20 entries over three intents. */
const LEDGER: Array<[string, string, LedgerEntryFields["outcome"], number?]> = [
  ["f1", "int_food", "authorized", 20.1],
  ["f1", "int_food", "settled", 19.99],
  ["f2", "int_food", "allowed", 45.5],
  ["f2", "int_food", "failed"],
  ["f3", "int_food", "allowed", 12.01],
  ["f3", "int_food", "settled"],
  ["t1", "int_travel", "authorized", 300],
  ["t1", "int_travel", "settled", 299.95],
  ["t2", "int_travel", "allowed", 120.4],
  ["t2", "int_travel", "failed"],
  ["t3", "int_travel", "allowed", 80],
  ["b1", "int_books", "allowed", 9.99],
  ["b1", "int_books", "settled", 9.99],
  ["b2", "int_books", "allowed", 15],
  ["b2", "int_books", "failed"],
  ["b2", "int_books", "allowed"],
  ["f4", "int_food", "allowed", 30],
  ["t4", "int_travel", "authorized", 40.4],
  ["b3", "int_books", "allowed", 0.01],
  ["f4", "int_food", "settled", 29.5],
];

const EXPECTED_SPENT: Record<string, string> = {
  int_food: "61.50", // 19.99 + 0 (failed) + 12.01 + 29.5
  int_travel: "420.35", // 299.95 + 0 (failed) + 80 + 40.4
  int_books: "25.00", // 9.99 + 15 (re-allowed at the earlier amount) + 0.01
};

async function fullAgreement(principal: Signer): Promise<IntentAgreement> {
  const mandates = await Promise.all([
    signMandate(draft("int_food", { maximum_amount: 100, cumulative_maximum: 300, required_acknowledgements: ["merchant"] }), principal),
    signMandate(draft("int_travel", { maximum_amount: 500, cumulative_maximum: 1000, required_acknowledgements: ["merchant", "psp"] }), principal),
    signMandate(
      draft("int_books", { maximum_amount: 50, cumulative_maximum: 200, not_before: "2025-01-01T00:00:00Z", expires_at: "2025-03-01T00:00:00+01:00" }),
      principal,
    ),
  ]);
  const [food, travel] = mandates.map(mandateHash) as [AgreementEvent["mandate_hash"], AgreementEvent["mandate_hash"]];
  let events: AgreementEvent[] = [];
  events = event(events, "proposed", food, "agent");
  events = event(events, "clarified", food, "principal");
  events = event(events, "accepted", food, "principal");
  events = event(events, "activated", food, "policy");
  const at = "2025-01-04T10:00:00Z";
  const acks = [
    await signAcknowledgement({ agreement_id: AGR, mandate_hash: food, role: "merchant", id: "mer_1", at, domain: "shop.example" }, merchant),
    await signAcknowledgement({ agreement_id: AGR, mandate_hash: travel, role: "merchant", id: "mer_1", at }, merchant),
  ];
  events = event(events, "acknowledged", food, "merchant");
  let a: IntentAgreement = {
    agreement_id: AGR,
    status: "active",
    created_at: "2025-01-01T09:00:00Z",
    mandates,
    parent_limits: { currency: "EUR", maximum_amount: 500, cumulative_maximum: 1500 },
    ledger: [],
    ledger_sequence: 0,
    ledger_as_of: "2025-01-01T09:00:00Z",
    acknowledgements: acks,
    events,
  };
  a = await amendMandate(a, "int_travel", { maximum_amount: 450 }, principal, {
    at: "2025-01-05T10:00:00Z",
    actor: { role: "principal", id: "prn_ada" },
    event_id: "evt_amend",
  });
  const travel2 = mandateHash(a.mandates[1]!);
  a = {
    ...a,
    acknowledgements: [...acks, await signAcknowledgement({ agreement_id: AGR, mandate_hash: travel2, role: "psp", id: "psp_1", at }, psp)],
    events: event(a.events, "acknowledged", travel2, "psp"),
  };
  LEDGER.forEach(([action_id, intent_id, outcome, amount], i) => {
    const fields: LedgerEntryFields = { action_id, intent_id, outcome, currency: "EUR", at: `2025-01-10T12:00:${String(i).padStart(2, "0")}Z` };
    a = withLedgerEntry(a, amount === undefined ? fields : { ...fields, amount }, `2025-01-10T12:00:${String(i).padStart(2, "0")}Z`).agreement;
  });
  const revocation = await signRevocation(a, { reason: "trip cancelled", at: "2025-01-11T00:00:00Z" }, principal);
  return { ...a, status: "revoked", revocation, events: event(a.events, "revoked", mandateHash(a.mandates[0]!), "principal") };
}

describe.each<[string, Signer]>([
  ["Ed25519", signerFromSeed("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")],
  ["P-256", generateSigner("ES256")],
])("prepareAgreement on a full signed agreement (principal %s)", (_name, principal) => {
  it("round-trips every fact through JSON and preparation", async () => {
    const built = await fullAgreement(principal);
    const stored = JSON.parse(JSON.stringify(built)) as IntentAgreement;
    expect(canonicalJson(stored)).toBe(canonicalJson(built));
    expect(statusFromEvents(stored.events)).toEqual({ status: "revoked" });
    const p = await prepareAgreement(stored);

    expect(p.agreement).toBe(stored);
    expect(p.eventChainProblem).toBeUndefined();
    expect(p.ledger).toEqual({ state: "ok" });
    expect(p.ledgerSequence).toBe(20);
    expect(p.ledgerAsOfMs).toBe(Date.UTC(2025, 0, 10, 12, 0, 19));
    expect(p.parentLimitsProblem).toBeUndefined();
    expect(p.parentCeilingMinor).toBe(toMinor(500, "EUR"));
    expect(p.parentCumulativeMinor).toBe(toMinor(1500, "EUR"));
    expect(p.revocation).toBe("valid");
    expect(p.totalSpentMinor).toBe(toMinor("61.50", "EUR") + toMinor("420.35", "EUR") + toMinor("25.00", "EUR"));

    expect(p.mandates.map((m) => m.mandate.intent_id)).toEqual(["int_food", "int_travel", "int_books"]);
    for (const m of p.mandates) {
      expect(m.hash).toBe(mandateHash(m.mandate));
      expect(m.signature).toBe("valid");
      expect(m.principalKid).toBe(principal.kid);
      expect(m.spentMinor).toBe(toMinor(EXPECTED_SPENT[m.mandate.intent_id]!, "EUR"));
    }
    const [food, travel, books] = p.mandates as [(typeof p.mandates)[0], (typeof p.mandates)[0], (typeof p.mandates)[0]];
    expect(food).toMatchObject({ ceilingMinor: toMinor(100, "EUR"), sliceMinor: toMinor(300, "EUR"), acks: [{ role: "merchant", state: "current" }] });
    expect(food.notBeforeMs).toBeUndefined();
    expect(food.expiresAtMs).toBeUndefined();
    expect(travel).toMatchObject({
      ceilingMinor: toMinor(450, "EUR"),
      acks: [
        { role: "merchant", state: "outdated" },
        { role: "psp", state: "current" },
      ],
    });
    expect(stored.mandate_history?.map((m) => m.maximum_amount)).toEqual([500]);
    expect(books).toMatchObject({ notBeforeMs: Date.UTC(2025, 0, 1), expiresAtMs: Date.UTC(2025, 1, 28, 23), acks: [] });
  });

  it("reflects tampering in the prepared facts", async () => {
    const a = await fullAgreement(principal);
    const tampered: IntentAgreement = { ...a, mandates: a.mandates.map((m, i) => (i === 2 ? { ...m, maximum_amount: 5000 } : m)) };
    const p = await prepareAgreement(tampered);
    expect(p.mandates.map((m) => m.signature)).toEqual(["valid", "valid", "invalid"]);
    expect(p.revocation).toMatchObject({ state: "invalid" });
    expect(p.parentLimitsProblem).toMatch(/maximum_amount 5000 is above/);
    const ledger = [...a.ledger!];
    ledger[10] = { ...ledger[10]!, amount: 8 };
    expect((await prepareAgreement({ ...a, ledger })).ledger).toMatchObject({ state: "broken", problem: expect.stringMatching(/^ledger entry 10/) });
    const events = [...a.events];
    events.splice(3, 1);
    expect((await prepareAgreement({ ...a, events })).eventChainProblem).toMatch(/^event 3/);
    const { ledger: _l, ...noLedger } = a;
    expect((await prepareAgreement(noLedger as IntentAgreement)).ledger).toEqual({ state: "unknown" });
  });
});

describe("prepareAgreement fail-closed facts", () => {
  const principal = generateSigner("EdDSA");
  async function one(fields: Partial<Mandate>, extra: Partial<IntentAgreement> = {}): Promise<IntentAgreement> {
    return {
      agreement_id: "agr_small",
      status: "proposed",
      mandates: [await signMandate(draft("int_x", fields), principal)],
      ledger: [],
      ledger_sequence: 0,
      ledger_as_of: "2025-01-01T00:00:00Z",
      events: [],
      ...extra,
    };
  }

  it("turns unusable times and amounts into closed facts", async () => {
    const p = await prepareAgreement(await one({ not_before: "soon", expires_at: "2025-02-30T00:00:00Z", maximum_amount: 1.001, cumulative_maximum: -5 }));
    const [m] = p.mandates;
    expect(m!.notBeforeMs).toBe(Number.POSITIVE_INFINITY);
    expect(m!.expiresAtMs).toBe(Number.NEGATIVE_INFINITY);
    expect(m!.ceilingMinor).toBeUndefined();
    expect(m!.sliceMinor).toBeUndefined();
    expect(m!.signature).toBe("valid");
    expect(p.revocation).toBe("none");
  });

  it("ages a future ledger_as_of from now and makes an unreadable one stale", async () => {
    const now = Date.UTC(2025, 0, 1, 12);
    expect((await prepareAgreement(await one({}, { ledger_as_of: "2030-01-01T00:00:00Z" }), { now })).ledgerAsOfMs).toBe(now);
    expect((await prepareAgreement(await one({}, { ledger_as_of: "2025-01-01T11:00:00Z" }), { now })).ledgerAsOfMs).toBe(now - 3600_000);
    expect((await prepareAgreement(await one({}, { ledger_as_of: "yesterday" }), { now })).ledgerAsOfMs).toBeNaN();
  });

  it("reports an unsigned mandate as missing, with no principal kid", async () => {
    const p = await prepareAgreement({ ...(await one({})), mandates: [draft("int_y", {})] });
    expect(p.mandates[0]).toMatchObject({ signature: "missing", spentMinor: 0n });
    expect(p.mandates[0]!.principalKid).toBeUndefined();
  });

  it("never throws on hostile-but-typed input", async () => {
    const base = await fullAgreement(principal);
    const bytes = Buffer.from(canonicalJson(base), "utf8");
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 0, max: 255 }), async (pos, value) => {
        const copy = Buffer.from(bytes);
        copy[pos] = value;
        let parsed: IntentAgreement;
        try {
          parsed = JSON.parse(new TextDecoder().decode(copy)) as IntentAgreement;
        } catch {
          return;
        }
        if (typeof parsed !== "object" || parsed === null) return;
        await expect(prepareAgreement(parsed)).resolves.toBeDefined();
      }),
      { numRuns: 60 },
    );
    const hostile = {
      ...base,
      mandates: [null, { ...base.mandates[0]!, principal: null, required_acknowledgements: "merchant" }, base.mandates[1]],
      mandate_history: [null, 4],
      acknowledgements: [null, { role: "merchant" }],
      events: [null],
      parent_limits: { currency: 5 },
      ledger_sequence: -3,
      revocation: { svc_revocation: 1 },
    } as unknown as IntentAgreement;
    const p = await prepareAgreement(hostile);
    expect(p.mandates).toHaveLength(2);
    expect(p.mandates[0]!.signature).toBe("invalid");
    expect(p.ledgerSequence).toBe(0);
    expect(p.eventChainProblem).toBeTypeOf("string");
    expect(p.revocation).toMatchObject({ state: "invalid" });
  });
});
