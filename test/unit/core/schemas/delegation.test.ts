import { describe, expect, it } from "vitest";
import { validate } from "../../../../src/core/schemas/index.js";
import type { Delegation } from "../../../../src/core/delegation/types.js";

// Fixtures are broken field by field below; a loose type keeps that readable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const hash = (hexDigit: string) => `sha256:${hexDigit.repeat(64)}`;
const jws = () => ({ protected: "eyJhbGciOiJFZERTQSJ9", payload: "eyJhIjoxfQ", signature: "c2ln" });
const key = () => ({ kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" });

const CONDITION_TYPES = "time_window, max_risk_score, merchant_allowlist, business_hours_only, principal_present";

function conditions(): Json[] {
  return [
    { type: "time_window", start: "22:00", end: "06:30", timezone: "Europe/Berlin" },
    { type: "max_risk_score", value: 70 },
    { type: "merchant_allowlist", merchants: ["shop.example", "books.example"] },
    { type: "business_hours_only", timezone: "America/Argentina/Buenos_Aires" },
    { type: "principal_present" },
  ];
}

function agreement(): Json {
  return {
    agreement_id: "agr_07",
    status: "active",
    mandates: [
      {
        intent_id: "int_1",
        principal: { type: "business", id: "org_acme", public_key: key() },
        agent: { agent_id: "agt_sub" },
        currency: "EUR",
        maximum_amount: 50,
        rendering: "Up to EUR 50 per purchase of office supplies.",
        algorithm: "EdDSA",
        signature: jws(),
      },
    ],
    ledger: [],
    ledger_sequence: 0,
    ledger_as_of: "2025-05-01T08:00:00Z",
    events: [
      {
        event_id: "e1",
        type: "accepted",
        at: "2025-05-01T08:00:00Z",
        actor: { role: "principal", id: "org_acme" },
        agreement_id: "agr_07",
        mandate_hash: hash("a"),
        event_hash: hash("b"),
      },
    ],
  };
}

/** A sub-delegation two links below its root principal, with every condition type. */
function delegation(): Json {
  return {
    delegation_id: "dlg_3",
    principal: { type: "business", id: "org_acme", public_key: key() },
    agent: { agent_id: "agt_sub", public_key: key(), display_name: "Procurement sub-agent", vendor: { name: "x" } },
    granted_at: "2025-05-01T08:00:00Z",
    expires_at: "2025-05-01T10:00:00Z",
    purpose: "Order office supplies for the Berlin office",
    scope: {
      intents: ["int_1"],
      currency: "EUR",
      maximum_amount: 50,
      cumulative_maximum: 200,
      action_types: ["purchase"],
      merchants: ["shop.example"],
      categories: ["office"],
    },
    conditions: conditions(),
    revocable: true,
    revocation_endpoint: "https://writ.example/svc/delegations/dlg_3",
    delegation_chain: [
      {
        delegation_id: "dlg_1",
        delegator: { type: "business", id: "org_acme" },
        delegate: { agent_id: "agt_main" },
        delegated_at: "2025-05-01T07:00:00Z",
        expires_at: "2025-05-01T12:00:00Z",
        scope: { currency: "EUR", maximum_amount: 100, cumulative_maximum: 500 },
        conditions: [{ type: "business_hours_only", timezone: "Europe/Berlin" }],
      },
      {
        delegation_id: "dlg_2",
        delegator: { type: "agent", id: "agt_main" },
        delegate: { agent_id: "agt_sub" },
        delegated_at: "2025-05-01T07:30:00Z",
        expires_at: "2025-05-01T11:00:00Z",
        scope: { currency: "EUR", maximum_amount: 50, merchants: ["shop.example"] },
      },
    ],
    status: "active",
    intent_agreement: agreement(),
    privilege: "high",
    approval: { type: "HUMAN_APPROVAL", approved_by: "alice@acme.example", approved_at: "2025-05-01T07:59:00Z", evidence: jws() },
    reconfirmed_at: "2025-05-01T07:59:00Z",
    renewal_of: "dlg_0",
  };
}

function errorsOf(value: unknown): string[] {
  const r = validate("delegation", value);
  if (r.ok) throw new Error("expected the delegation to be rejected");
  return r.errors;
}

describe("delegation schema: valid records", () => {
  it("accepts a chained delegation with every condition type and a bound agreement", () => {
    expect(validate<Delegation>("delegation", delegation())).toEqual({ ok: true, value: delegation() });
  });

  it("fills the defaults: revocable true, no conditions, a direct grant", () => {
    const d = delegation();
    delete d.revocable;
    delete d.conditions;
    delete d.delegation_chain;
    const r = validate<Delegation>("delegation", d);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.revocable).toBe(true);
    expect(r.value.conditions).toEqual([]);
    expect(r.value.delegation_chain).toEqual([]);
  });

  it("keeps an explicit revocable false", () => {
    const d = delegation();
    d.revocable = false;
    const r = validate<Delegation>("delegation", d);
    expect(r.ok && r.value.revocable).toBe(false);
  });

  it("allows other members on the agent object, not on the principal", () => {
    const d = delegation();
    d.principal.nickname = "acme";
    expect(errorsOf(d)).toEqual(["/principal: must not have additional property 'nickname'"]);
  });
});

describe("delegation schema: rules", () => {
  it("names missing required fields and extra properties", () => {
    const d = delegation();
    delete d.scope;
    d.extra = 1;
    expect(errorsOf(d)).toEqual(["/: must have required property 'scope'", "/: must not have additional property 'extra'"]);
  });

  it("reports an unknown condition type with the allowed ones", () => {
    const d = delegation();
    d.conditions[2] = { type: "geo_fence", countries: ["DE"] };
    expect(errorsOf(d)).toEqual([`/conditions/2/type: must be one of: ${CONDITION_TYPES}`]);
  });

  it("checks a condition against its own type only (oneOf discriminated by type)", () => {
    const d = delegation();
    d.conditions[1] = { type: "max_risk_score", merchants: ["shop.example"] };
    expect(errorsOf(d)).toEqual(["/conditions/1: must have required property 'value'", "/conditions/1: must not have additional property 'merchants'"]);
  });

  it("requires the condition type to be present", () => {
    const d = delegation();
    d.conditions[4] = {};
    expect(errorsOf(d)).toEqual(["/conditions/4: must have required property 'type'"]);
  });

  it("checks the fields of each condition type", () => {
    const d = delegation();
    d.conditions = conditions();
    d.conditions[0].end = "24:00";
    d.conditions[1].value = 101;
    d.conditions[2].merchants = [];
    d.conditions[3].timezone = "";
    d.conditions[4].when = "now";
    expect(errorsOf(d)).toEqual([
      "/conditions/0/end: must match pattern ^([01][0-9]|2[0-3]):[0-5][0-9]$",
      "/conditions/1/value: must be <= 100",
      "/conditions/2/merchants: must have at least 1 item",
      "/conditions/3/timezone: must not be empty",
      "/conditions/3/timezone: must match pattern ^[A-Za-z][A-Za-z0-9_+/-]*$",
      "/conditions/4: must not have additional property 'when'",
    ]);
  });

  it("checks the links of the delegation chain", () => {
    const d = delegation();
    d.delegation_chain[1].delegator.type = "robot";
    d.delegation_chain[0].conditions[0] = { type: "max_risk_score", value: -1 };
    delete d.delegation_chain[1].delegated_at;
    expect(errorsOf(d)).toEqual([
      "/delegation_chain/0/conditions/0/value: must be >= 0",
      "/delegation_chain/1: must have required property 'delegated_at'",
      "/delegation_chain/1/delegator/type: must be one of: human, business, institution, system, agent",
    ]);
  });

  it("checks the scope", () => {
    const d = delegation();
    d.scope.currency = "EURO";
    d.scope.maximum_amount = -1;
    d.scope.limit = 3;
    expect(errorsOf(d)).toEqual([
      "/scope: must not have additional property 'limit'",
      "/scope/currency: must match pattern ^[A-Z]{3}$",
      "/scope/maximum_amount: must be >= 0",
    ]);
  });

  it("checks status, privilege and approval", () => {
    const d = delegation();
    d.status = "paused";
    d.privilege = "root";
    d.approval.type = "AUTO";
    expect(errorsOf(d)).toEqual([
      "/status: must be one of: active, suspended, revoked, expired",
      "/privilege: must be one of: standard, standing, high",
      '/approval/type: must equal "HUMAN_APPROVAL"',
    ]);
  });

  it("validates the bound intent agreement with its own rules", () => {
    const d = delegation();
    delete d.intent_agreement.mandates[0].signature;
    d.intent_agreement.ledger_sequence = -3;
    expect(errorsOf(d)).toEqual([
      "/intent_agreement/mandates/0: must have required property 'signature' (required when status is accepted, active or expired)",
      "/intent_agreement/ledger_sequence: must be >= 0",
    ]);
  });

  it("validates a condition, a scope and a chain link on their own", () => {
    expect(validate("condition", { type: "principal_present" }).ok).toBe(true);
    expect(validate("condition", { type: "time_window", start: "9:00", end: "17:00", timezone: "UTC" })).toEqual({
      ok: false,
      errors: ["/start: must match pattern ^([01][0-9]|2[0-3]):[0-5][0-9]$"],
    });
    expect(validate("scope", { currency: "JPY", maximum_amount: 5000 }).ok).toBe(true);
    expect(validate("chain-link", delegation().delegation_chain[0]).ok).toBe(true);
  });
});
