import { describe, expect, it } from "vitest";
import { generateSigner, type Signer } from "../../../../src/core/jose/index.js";
import { addMandate, amendMandate, type ChangeOptions } from "../../../../src/core/agreement/amend.js";
import { buildEvent, verifyEventChain } from "../../../../src/core/agreement/events.js";
import { appendLedgerEntry, ledgerSummary, verifyLedger } from "../../../../src/core/agreement/ledger.js";
import { mandateHash, signMandate, verifyMandate } from "../../../../src/core/agreement/mandate.js";
import { statusFromEvents } from "../../../../src/core/agreement/state.js";
import type { AgreementEvent, EventType, IntentAgreement, LedgerEntry, Mandate } from "../../../../src/core/agreement/types.js";

const principal = generateSigner("ES256");

function draft(intent_id: string, fields: Partial<Mandate> = {}): Mandate {
  return {
    intent_id,
    principal: { type: "human", id: "prn_1" },
    agent: { agent_id: "agt_1" },
    currency: "USD",
    maximum_amount: 50,
    rendering: `${intent_id}: up to 50 USD`,
    ...fields,
  };
}

async function agreement(types: EventType[], opts: { ledger?: LedgerEntry[]; signer?: Signer } = {}): Promise<IntentAgreement> {
  const m = await signMandate(draft("int_a"), opts.signer ?? principal);
  const events: AgreementEvent[] = [];
  types.forEach((type, i) =>
    events.push(
      buildEvent(events[events.length - 1], {
        event_id: `evt_${i}`,
        type,
        at: `2025-01-01T00:00:0${i}Z`,
        actor: { role: "principal", id: "prn_1" },
        agreement_id: "agr_amend",
        mandate_hash: mandateHash(m),
      }),
    ),
  );
  const ledger = opts.ledger ?? [];
  return { agreement_id: "agr_amend", status: "active", mandates: [m], ledger, ...ledgerSummary(ledger), ledger_as_of: "2025-01-01T00:00:00Z", events };
}

const ACTIVE: EventType[] = ["proposed", "accepted", "activated"];
const OPTS: ChangeOptions = { at: "2025-01-02T00:00:00Z", actor: { role: "principal", id: "prn_1" }, event_id: "evt_change" };

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "none";
  } catch (e) {
    return (e as { code?: string }).code ?? "other";
  }
}

describe("amendMandate", () => {
  it("signs a new version, keeps the old one in history and records an amended event", async () => {
    const before = await agreement(ACTIVE);
    const snapshot = structuredClone(before);
    const after = await amendMandate(before, "int_a", { maximum_amount: 75, rendering: "int_a: up to 75 USD" }, principal, OPTS);
    expect(before).toEqual(snapshot);
    const [old] = before.mandates;
    const [now] = after.mandates;
    expect(now).toMatchObject({ intent_id: "int_a", maximum_amount: 75, algorithm: "ES256" });
    expect(await verifyMandate(now!)).toBe("valid");
    expect(mandateHash(now!)).not.toBe(mandateHash(old!));
    expect(after.mandate_history).toEqual([old]);
    const event = after.events[after.events.length - 1]!;
    expect(event).toMatchObject({
      type: "amended",
      event_id: "evt_change",
      mandate_hash: mandateHash(now!),
      detail: { intent_id: "int_a", previous_mandate_hash: mandateHash(old!), mandate_hash: mandateHash(now!) },
    });
    expect(verifyEventChain(after.events, "agr_amend")).toBeUndefined();
    expect(statusFromEvents(after.events)).toEqual({ status: "active" });
    expect(after.updated_at).toBe(OPTS.at);

    const again = await amendMandate(after, "int_a", { maximum_amount: 80 }, principal, { ...OPTS, event_id: "evt_again" });
    expect(again.mandate_history).toEqual([old, now]);
    expect(verifyEventChain(again.events, "agr_amend")).toBeUndefined();
  });

  it("refuses an unknown intent, a changed intent_id and another signer", async () => {
    const a = await agreement(ACTIVE);
    expect(await code(amendMandate(a, "int_x", {}, principal, OPTS))).toBe("INTENT_NOT_FOUND");
    expect(await code(amendMandate(a, "int_a", { intent_id: "int_b" } as Partial<Mandate>, principal, OPTS))).toBe("INTENT_ID_CHANGED");
    expect(await code(amendMandate(a, "int_a", {}, generateSigner("EdDSA"), OPTS))).toBe("SIGNER_NOT_PRINCIPAL");
    const badKey = {
      ...a,
      mandates: [{ ...a.mandates[0]!, principal: { ...a.mandates[0]!.principal, public_key: { kty: "OKP", crv: "Ed25519", x: "short" } } }],
    };
    expect(await code(amendMandate(badKey as IntentAgreement, "int_a", {}, principal, OPTS))).toBe("SIGNER_NOT_PRINCIPAL");
  });

  it("refuses a currency change once the intent has ledger entries", async () => {
    const spent = [appendLedgerEntry([], { action_id: "a1", at: "2025-01-01T01:00:00Z", currency: "USD", outcome: "allowed", amount: 5 })];
    expect(await code(amendMandate(await agreement(ACTIVE, { ledger: spent }), "int_a", { currency: "EUR" }, principal, OPTS))).toBe(
      "CURRENCY_CHANGE_WITH_SPEND",
    );
    const fresh = await amendMandate(await agreement(ACTIVE), "int_a", { currency: "EUR" }, principal, OPTS);
    expect(fresh.mandates[0]!.currency).toBe("EUR");
  });

  it("follows the state machine and refuses a broken event log", async () => {
    expect(await code(amendMandate(await agreement(["proposed"]), "int_a", {}, principal, OPTS))).toBe("ILLEGAL_TRANSITION");
    expect(await code(amendMandate(await agreement([...ACTIVE, "revoked"]), "int_a", {}, principal, OPTS))).toBe("ILLEGAL_TRANSITION");
    expect((await amendMandate(await agreement(["proposed", "accepted"]), "int_a", {}, principal, OPTS)).status).toBe("accepted");
    const broken = await agreement(ACTIVE);
    broken.events[1] = { ...broken.events[1]!, note: "edited" };
    expect(await code(amendMandate(broken, "int_a", {}, principal, OPTS))).toBe("EVENT_LOG_INVALID");
    expect(await code(amendMandate(await agreement([]), "int_a", {}, principal, OPTS))).toBe("EVENT_LOG_INVALID");
    expect(await code(amendMandate(await agreement(ACTIVE), "int_a", {}, principal, { ...OPTS, event_id: "evt_1" }))).toBe("EVENT_LOG_INVALID");
  });
});

describe("addMandate", () => {
  it("appends a signed intent with an added event", async () => {
    const before = await agreement(ACTIVE);
    const snapshot = structuredClone(before);
    const after = await addMandate(before, draft("int_b", { maximum_amount: 20 }), principal, OPTS);
    expect(before).toEqual(snapshot);
    expect(after.mandates.map((m) => m.intent_id)).toEqual(["int_a", "int_b"]);
    const added = after.mandates[1]!;
    expect(await verifyMandate(added)).toBe("valid");
    expect(after.events[after.events.length - 1]).toMatchObject({
      type: "added",
      mandate_hash: mandateHash(added),
      detail: { intent_id: "int_b", mandate_hash: mandateHash(added) },
    });
    expect(verifyEventChain(after.events, "agr_amend")).toBeUndefined();
    expect(after.mandate_history).toBeUndefined();
  });

  it("refuses a duplicate intent, unattributed spend, another signer and an illegal state", async () => {
    const a = await agreement(ACTIVE);
    expect(await code(addMandate(a, draft("int_a"), principal, OPTS))).toBe("INTENT_DUPLICATE");
    expect(await code(addMandate(a, draft("int_b"), generateSigner("ES256"), OPTS))).toBe("SIGNER_NOT_PRINCIPAL");
    expect(await code(addMandate(await agreement(["proposed", "clarified"]), draft("int_b"), principal, OPTS))).toBe("ILLEGAL_TRANSITION");
    const unattributed = [appendLedgerEntry([], { action_id: "a1", at: "2025-01-01T01:00:00Z", currency: "USD", outcome: "allowed", amount: 5 })];
    const withSpend = await agreement(ACTIVE, { ledger: unattributed });
    expect(verifyLedger(withSpend)).toEqual({ state: "ok" });
    expect(await code(addMandate(withSpend, draft("int_b"), principal, OPTS))).toBe("LEDGER_ENTRIES_UNATTRIBUTED");
  });
});
