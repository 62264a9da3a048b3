import { describe, expect, it } from "vitest";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { SchemaError, assertValid, inlinedSchemaFor, validate } from "../../../../src/core/schemas/index.js";
import type { IntentAgreement } from "../../../../src/core/agreement/types.js";

// Fixtures are broken field by field below; a loose type keeps that readable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const hash = (hexDigit: string) => `sha256:${hexDigit.repeat(64)}`;
const jws = () => ({ protected: "eyJhbGciOiJFZERTQSIsInR5cCI6Im1hbmRhdGUrandzIn0", payload: "eyJhIjoxfQ", signature: "c2lnbmF0dXJlLWJ5dGVz" });
const principalKey = { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" };
const agentKey = {
  kty: "EC",
  crv: "P-256",
  x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
  y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
};

function mandate(n: number, overrides: Record<string, unknown> = {}) {
  return {
    intent_id: `int_${n}`,
    principal: { type: "human", id: "prn_alice", public_key: { ...principalKey } },
    agent: { agent_id: "agt_shopper", public_key: { ...agentKey } },
    purpose: `Groceries, intent ${n}`,
    natural_language: "Buy the weekly groceries, nothing fancy.",
    currency: "EUR",
    maximum_amount: 120.5,
    cumulative_maximum: 400,
    categories: ["groceries"],
    merchants: ["shop.example"],
    items: ["milk", "bread"],
    action_types: ["purchase"],
    not_before: "2025-03-01T00:00:00Z",
    expires_at: "2025-03-31T23:59:59+01:00",
    required_acknowledgements: ["merchant"],
    rendering: "You allow agt_shopper to spend up to EUR 120.50 per purchase at shop.example.",
    algorithm: "EdDSA",
    signature: jws(),
    ...overrides,
  };
}

/** A realistic active agreement: three signed mandates, events, a ledger and an acknowledgement. */
function agreement(): Json {
  return {
    agreement_id: "agr_01",
    status: "active",
    created_at: "2025-03-01T09:00:00Z",
    updated_at: "2025-03-02T10:00:00Z",
    mandates: [mandate(1), mandate(2), mandate(3, { algorithm: "ES256", currency: "USD" })],
    parent_limits: { currency: "EUR", maximum_amount: 200, cumulative_maximum: 1000 },
    ledger: [
      {
        action_id: "act_1",
        at: "2025-03-02T10:00:00Z",
        currency: "EUR",
        outcome: "settled",
        sequence: 1,
        entry_hash: hash("1"),
        amount: 12.3,
        idempotency_key: "k1",
        intent_id: "int_1",
      },
      {
        action_id: "act_2",
        at: "2025-03-02T11:00:00Z",
        currency: "EUR",
        outcome: "authorized",
        sequence: 2,
        entry_hash: hash("2"),
        prev_entry_hash: hash("1"),
        amount: 0,
        intent_id: "int_2",
      },
      { action_id: "act_3", at: "2025-03-02T12:00:00Z", currency: "USD", outcome: "failed", sequence: 3, entry_hash: hash("3"), prev_entry_hash: hash("2") },
    ],
    ledger_sequence: 3,
    ledger_head: hash("3"),
    ledger_as_of: "2025-03-02T12:00:05Z",
    mandate_history: [mandate(1, { maximum_amount: 50 })],
    acknowledgements: [
      {
        svc_ack: 1,
        agreement_id: "agr_01",
        mandate_hash: hash("a"),
        role: "merchant",
        id: "shop.example",
        at: "2025-03-01T09:05:00Z",
        public_key: { ...agentKey },
        signature: jws(),
        domain: "shop.example",
      },
    ],
    events: [
      {
        event_id: "evt_1",
        type: "proposed",
        at: "2025-03-01T09:00:00Z",
        actor: { role: "agent", id: "agt_shopper" },
        agreement_id: "agr_01",
        mandate_hash: hash("a"),
        event_hash: hash("b"),
      },
      {
        event_id: "evt_2",
        type: "accepted",
        at: "2025-03-01T09:01:00Z",
        actor: { role: "principal", id: "prn_alice" },
        agreement_id: "agr_01",
        mandate_hash: hash("a"),
        prev_event_hash: hash("b"),
        event_hash: hash("c"),
        note: "signed in the app",
      },
      {
        event_id: "evt_3",
        type: "acknowledged",
        at: "2025-03-01T09:05:00Z",
        actor: { role: "merchant", id: "shop.example" },
        agreement_id: "agr_01",
        mandate_hash: hash("a"),
        prev_event_hash: hash("c"),
        event_hash: hash("d"),
        detail: { role: "merchant", anything: [1, 2] },
      },
      {
        event_id: "evt_4",
        type: "activated",
        at: "2025-03-01T09:06:00Z",
        actor: { role: "policy", id: "writ" },
        agreement_id: "agr_01",
        mandate_hash: hash("a"),
        prev_event_hash: hash("d"),
        event_hash: hash("e"),
      },
    ],
  };
}

function revoked(): Json {
  const a = agreement();
  a.status = "revoked";
  a.revocation = {
    svc_revocation: 1,
    agreement_id: "agr_01",
    mandate_hash: hash("a"),
    at: "2025-03-03T08:00:00Z",
    reason: "no longer needed",
    signature: jws(),
    mandate_hashes: [hash("a"), hash("5"), hash("6")],
  };
  a.events.push({
    event_id: "evt_5",
    type: "revoked",
    at: "2025-03-03T08:00:00Z",
    actor: { role: "principal", id: "prn_alice" },
    agreement_id: "agr_01",
    mandate_hash: hash("a"),
    prev_event_hash: hash("e"),
    event_hash: hash("f"),
  });
  return a;
}

function errorsOf(value: unknown): string[] {
  const r = validate("intent-agreement", value);
  if (r.ok) throw new Error("expected the agreement to be rejected");
  return r.errors;
}

const SIGNED_REASON = "(required when status is accepted, active or expired)";

describe("intent agreement schema: valid records", () => {
  it("accepts a realistic active agreement with three mandates, events, ledger and acknowledgements", () => {
    const r = validate<IntentAgreement>("intent-agreement", agreement());
    expect(r).toEqual({ ok: true, value: agreement() });
  });

  it("accepts a revoked agreement carrying a signed revocation of every mandate", () => {
    expect(validate("intent-agreement", revoked()).ok).toBe(true);
  });

  it("accepts a proposed agreement whose mandates are not signed yet", () => {
    const a = agreement();
    a.status = "proposed";
    a.mandates = [{ intent_id: "int_1", principal: { type: "business", id: "org_acme" }, agent: { agent_id: "agt_1" }, currency: "EUR" }];
    a.ledger = [];
    a.ledger_sequence = 0;
    delete a.ledger_head;
    expect(validate("intent-agreement", a)).toEqual({ ok: true, value: a });
  });
});

describe("intent agreement schema: rules", () => {
  it("names a missing required field", () => {
    const a = agreement();
    delete a.ledger;
    expect(errorsOf(a)).toEqual(["/: must have required property 'ledger'"]);
  });

  it("refuses additional properties on the agreement and on its parts", () => {
    const a = agreement();
    a.owner = "mallory";
    a.mandates[2].bonus = true;
    a.parent_limits.extra = 1;
    expect(errorsOf(a)).toEqual([
      "/: must not have additional property 'owner'",
      "/mandates/2: must not have additional property 'bonus'",
      "/parent_limits: must not have additional property 'extra'",
    ]);
  });

  it("rejects a hash that is not sha256: plus 64 lowercase hex", () => {
    const a = agreement();
    a.events[1].prev_event_hash = `sha256:${"B".repeat(64)}`;
    a.ledger_head = "sha256:abc";
    expect(errorsOf(a)).toEqual([
      "/ledger_head: must match pattern ^sha256:[0-9a-f]{64}$",
      "/events/1/prev_event_hash: must match pattern ^sha256:[0-9a-f]{64}$",
    ]);
  });

  it("rejects a currency that is not three upper-case letters", () => {
    const a = agreement();
    a.ledger[2].currency = "usd";
    expect(errorsOf(a)).toEqual(["/ledger/2/currency: must match pattern ^[A-Z]{3}$"]);
  });

  it("requires svc_ack to be the constant 1", () => {
    const a = agreement();
    a.acknowledgements[0].svc_ack = 2;
    expect(errorsOf(a)).toEqual(["/acknowledgements/0/svc_ack: must equal 1"]);
  });

  it("refuses a JWS with a member other than protected, payload and signature", () => {
    const a = agreement();
    a.mandates[1].signature.header = { kid: "x" };
    expect(errorsOf(a)).toEqual(["/mandates/1/signature: must not have additional property 'header'"]);
  });

  it("refuses a public key that carries the private member d", () => {
    const a = agreement();
    a.acknowledgements[0].public_key.d = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI";
    expect(errorsOf(a)).toContain("/acknowledgements/0/public_key: must not have property 'd'");
  });

  for (const status of ["accepted", "active", "expired"]) {
    it(`requires signature, rendering, algorithm and principal.public_key on every mandate when ${status}`, () => {
      const a = agreement();
      a.status = status;
      delete a.mandates[0].signature;
      delete a.mandates[1].rendering;
      delete a.mandates[1].algorithm;
      delete a.mandates[2].principal.public_key;
      expect(errorsOf(a)).toEqual([
        `/mandates/0: must have required property 'signature' ${SIGNED_REASON}`,
        `/mandates/1: must have required property 'rendering' ${SIGNED_REASON}`,
        `/mandates/1: must have required property 'algorithm' ${SIGNED_REASON}`,
        `/mandates/2/principal: must have required property 'public_key' ${SIGNED_REASON}`,
      ]);
    });
  }

  for (const status of ["proposed", "clarifying", "revoked"]) {
    it(`does not require mandate signatures when ${status}`, () => {
      const a = agreement();
      a.status = status;
      for (const m of a.mandates) {
        delete m.signature;
        delete m.rendering;
        delete m.algorithm;
        delete m.principal.public_key;
      }
      expect(validate("intent-agreement", a).ok).toBe(true);
    });
  }

  it("requires at least one mandate", () => {
    const a = agreement();
    a.mandates = [];
    expect(errorsOf(a)).toEqual(["/mandates: must have at least 1 item"]);
  });

  it("checks ledger_sequence and entry sequence bounds", () => {
    const a = agreement();
    a.ledger_sequence = -1;
    a.ledger[0].sequence = 0;
    a.ledger[1].amount = -5;
    expect(errorsOf(a)).toEqual(["/ledger/0/sequence: must be >= 1", "/ledger/1/amount: must be >= 0", "/ledger_sequence: must be >= 0"]);
    a.ledger_sequence = 2.5;
    expect(errorsOf(a)).toContain("/ledger_sequence: must be an integer");
  });

  it("rejects a malformed date-time and an unknown status, event type or outcome", () => {
    const a = agreement();
    a.ledger_as_of = "yesterday";
    a.status = "paused";
    a.events[0].type = "deleted";
    a.ledger[0].outcome = "pending";
    const errors = errorsOf(a);
    expect(errors).toContain("/ledger_as_of: must be a valid date-time");
    expect(errors).toContain("/status: must be one of: proposed, clarifying, accepted, active, revoked, expired");
    expect(errors).toContain("/events/0/type: must be one of: proposed, clarified, accepted, activated, acknowledged, amended, added, revoked, expired");
    expect(errors).toContain("/ledger/0/outcome: must be one of: allowed, authorized, settled, failed, captured, released, voided, expired, refunded");
  });

  it("checks the revocation: constant marker, non-empty mandate_hashes", () => {
    const a = revoked();
    a.revocation.svc_revocation = "1";
    a.revocation.mandate_hashes = [];
    expect(errorsOf(a)).toEqual(["/revocation/svc_revocation: must equal 1", "/revocation/mandate_hashes: must have at least 1 item"]);
  });

  it("requires mandate_hashes on the revocation of an agreement with more than one intent", () => {
    const a = revoked();
    delete a.revocation.mandate_hashes;
    expect(errorsOf(a)).toEqual(["/revocation: must have required property 'mandate_hashes' (required when the agreement holds more than one intent)"]);
    a.mandates = [a.mandates[0]];
    expect(validate("intent-agreement", a).ok).toBe(true);
  });

  it("checks the actor of an event and the role of an acknowledgement", () => {
    const a = agreement();
    a.events[2].actor = { role: "bank", id: "x" };
    a.acknowledgements[0].role = "principal";
    expect(errorsOf(a)).toEqual([
      "/acknowledgements/0/role: must be one of: agent, merchant, psp, issuer",
      "/events/2/actor/role: must be one of: principal, agent, merchant, psp, issuer, policy",
    ]);
  });

  it("assertValid returns the typed value or throws SchemaError with code SCHEMA_INVALID", () => {
    const good = assertValid<IntentAgreement>("intent-agreement", agreement());
    expect(good.mandates).toHaveLength(3);
    const a = agreement();
    delete a.events;
    try {
      assertValid("intent-agreement", a);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(SchemaError);
      expect((e as SchemaError).code).toBe("SCHEMA_INVALID");
      expect((e as SchemaError).errors).toEqual(["/: must have required property 'events'"]);
    }
  });
});

describe("intent agreement schema: self-contained copy", () => {
  const ajv = new Ajv2020({ allErrors: true, strict: true, discriminator: true });
  addFormatsModule.default(ajv);
  const standalone = ajv.compile(inlinedSchemaFor("intent-agreement"));

  it("gives the same verdicts without any other schema registered", () => {
    expect(standalone(agreement())).toBe(true);
    expect(standalone(revoked())).toBe(true);
    const unsigned = agreement();
    delete unsigned.mandates[0].signature;
    expect(standalone(unsigned)).toBe(false);
    unsigned.status = "proposed";
    expect(standalone(unsigned)).toBe(true);
    const badKey = agreement();
    badKey.mandates[0].principal.public_key.d = "x";
    expect(standalone(badKey)).toBe(false);
  });
});
