import { describe, expect, it } from "vitest";
import {
  buildEvent,
  buildSignedAgreement,
  mandateHash,
  prepareAgreement,
  type AgreementEvent,
  type IntentAgreement,
  type Mandate,
} from "../../../src/core/agreement/index.js";
import { prepareDelegation } from "../../../src/core/delegation/index.js";
import { evaluate } from "../../../src/core/evaluate/index.js";
import { keyId } from "../../../src/core/jose/index.js";
import { IMPLICIT_DELEGATION_PREFIX, implicitDelegation, OPEN_END } from "../../../src/verify/pipeline/implicit-delegation.js";
import { action, context, iso, otherKey, PRINCIPAL, principalKey, T0 } from "../../fixtures/records.js";

const DAY = 24 * 3600_000;
const AGENT = "agent-buyer";

type Input = Parameters<typeof implicitDelegation>[0];

function m(over: Partial<Mandate> = {}): Mandate {
  return {
    intent_id: "i1",
    principal: { ...PRINCIPAL, public_key: principalKey.publicJwk },
    agent: { agent_id: AGENT },
    currency: "USD",
    maximum_amount: 100,
    expires_at: iso(T0 + DAY),
    ...over,
  };
}

function ev(type: AgreementEvent["type"], at: number): AgreementEvent {
  return { event_id: `e-${type}-${at}`, type, at: iso(at), actor: { role: "principal", id: PRINCIPAL.id }, agreement_id: "agr-1" } as AgreementEvent;
}

function input(over: Partial<Input> = {}): Input {
  return { agreement_id: "agr-1", mandates: [m()], events: [ev("proposed", T0 - 2 * DAY), ev("accepted", T0 - DAY)], created_at: iso(T0 - 3 * DAY), ...over };
}

describe("implicitDelegation: the synthesized record", () => {
  it("names the agreement, the verified agent, the first mandate's principal and currency, and nothing else", () => {
    const d = implicitDelegation(input({ mandates: [m({ currency: "EUR" }), m({ intent_id: "i2", currency: "USD" })] }), "agent-verified");
    expect(d).toMatchObject({
      delegation_id: `${IMPLICIT_DELEGATION_PREFIX}agr-1`,
      principal: { type: PRINCIPAL.type, id: PRINCIPAL.id },
      agent: { agent_id: "agent-verified" },
      scope: { currency: "EUR" },
      conditions: [],
      revocable: true,
      delegation_chain: [],
      status: "active",
    });
    expect(Object.keys(d.scope)).toEqual(["currency"]);
    expect(d.delegation_id).toBe("agreement:agr-1");
  });

  it("carries the principal's key only when every mandate names that same key", () => {
    const same = implicitDelegation(input({ mandates: [m(), m({ intent_id: "i2" })] }), AGENT);
    expect(same.principal.public_key).toEqual(principalKey.publicJwk);
    expect(keyId(same.principal.public_key as never)).toBe(keyId(principalKey.publicJwk));

    const mixed = implicitDelegation(input({ mandates: [m(), m({ intent_id: "i2", principal: { ...PRINCIPAL, public_key: otherKey.publicJwk } })] }), AGENT);
    expect(mixed.principal).toEqual({ type: PRINCIPAL.type, id: PRINCIPAL.id });

    const missing = implicitDelegation(input({ mandates: [m(), m({ intent_id: "i2", principal: { ...PRINCIPAL } })] }), AGENT);
    expect(missing.principal.public_key).toBeUndefined();

    const broken = implicitDelegation(
      input({ mandates: [m({ principal: { ...PRINCIPAL, public_key: { kty: "OKP", crv: "Ed25519", x: "short" } as never } })] }),
      AGENT,
    );
    expect(broken.principal.public_key).toBeUndefined();

    const priv = { ...principalKey.publicJwk, d: "AAAA" } as never;
    expect(implicitDelegation(input({ mandates: [m({ principal: { ...PRINCIPAL, public_key: priv } })] }), AGENT).principal.public_key).toBeUndefined();
  });

  it("falls back to a human principal named unknown, and currency XXX, for a mandate without them", () => {
    const d = implicitDelegation(input({ mandates: [{ intent_id: "i1" } as unknown as Mandate] }), AGENT);
    expect(d.principal).toEqual({ type: "human", id: "unknown" });
    expect(d.scope).toEqual({ currency: "XXX" });
  });
});

describe("implicitDelegation: the window", () => {
  it("starts at the earliest not_before when every mandate has one", () => {
    const d = implicitDelegation(input({ mandates: [m({ not_before: iso(T0 - 5 * DAY) }), m({ intent_id: "i2", not_before: iso(T0 - 6 * DAY) })] }), AGENT);
    expect(d.granted_at).toBe(iso(T0 - 6 * DAY));
    expect(d.approval).toEqual({ type: "HUMAN_APPROVAL", approved_by: PRINCIPAL.id, approved_at: iso(T0 - 6 * DAY) });
  });

  it("otherwise starts at the first accepted event, else created_at, else the first event, else the epoch", () => {
    const partial = [m({ not_before: iso(T0 - 9 * DAY) }), m({ intent_id: "i2" })];
    const events = [ev("proposed", T0 - 4 * DAY), ev("accepted", T0 - 2 * DAY), ev("accepted", T0 - 3 * DAY)];
    expect(implicitDelegation(input({ mandates: partial, events }), AGENT).granted_at).toBe(iso(T0 - 3 * DAY));
    expect(implicitDelegation(input({ events: [ev("proposed", T0 - 4 * DAY)], created_at: iso(T0 - 5 * DAY) }), AGENT).granted_at).toBe(iso(T0 - 5 * DAY));
    expect(implicitDelegation(input({ events: [ev("proposed", T0 - 4 * DAY)], created_at: "not a time" }), AGENT).granted_at).toBe(iso(T0 - 4 * DAY));
    expect(implicitDelegation(input({ events: [], created_at: undefined }), AGENT).granted_at).toBe(iso(0));
    // An unparseable not_before does not count as "every mandate has one".
    expect(implicitDelegation(input({ mandates: [m({ not_before: "yesterday" })] }), AGENT).granted_at).toBe(iso(T0 - DAY));
  });

  it("tolerates events that are not an array or hold junk", () => {
    expect(implicitDelegation(input({ events: "junk" as never }), AGENT).granted_at).toBe(iso(T0 - 3 * DAY));
    expect(implicitDelegation(input({ events: [null as never, ev("accepted", T0 - 2 * DAY)] }), AGENT).granted_at).toBe(iso(T0 - 2 * DAY));
  });

  it("ends at the latest expiry, or is open-ended when any mandate has none (or none can be read)", () => {
    expect(
      implicitDelegation(input({ mandates: [m({ expires_at: iso(T0 + DAY) }), m({ intent_id: "i2", expires_at: iso(T0 + 3 * DAY) })] }), AGENT).expires_at,
    ).toBe(iso(T0 + 3 * DAY));
    const { expires_at: _e, ...noExpiry } = m({ intent_id: "i2" });
    expect(implicitDelegation(input({ mandates: [m(), noExpiry] }), AGENT).expires_at).toBe(OPEN_END);
    expect(implicitDelegation(input({ mandates: [m({ expires_at: "soon" })] }), AGENT).expires_at).toBe(OPEN_END);
  });

  it("never throws for an agreement without mandates (open-ended, currency XXX)", () => {
    const d = implicitDelegation(input({ mandates: [] }), AGENT);
    expect(d.expires_at).toBe(OPEN_END);
    expect(d.scope).toEqual({ currency: "XXX" });
  });

  it("re-confirms at the latest accepted, amended or added event, and not at others", () => {
    const events = [
      ev("proposed", T0 - 9 * DAY),
      ev("accepted", T0 - 8 * DAY),
      ev("amended", T0 - 3 * DAY),
      ev("added", T0 - 5 * DAY),
      ev("acknowledged", T0 - DAY),
    ];
    expect(implicitDelegation(input({ events }), AGENT).reconfirmed_at).toBe(iso(T0 - 3 * DAY));
    expect(implicitDelegation(input({ events: [ev("proposed", T0 - 9 * DAY), ev("activated", T0 - DAY)] }), AGENT).reconfirmed_at).toBeUndefined();
  });
});

describe("implicitDelegation: evaluated", () => {
  async function standing(signedAt: number, extra: (a: IntentAgreement) => IntentAgreement = (a) => a) {
    const signed = await buildSignedAgreement({ agreement_id: "agr-1", mandates: [m({ expires_at: iso(T0 + 20 * DAY) })], at: iso(signedAt) }, principalKey);
    const agreement = { ...extra(signed), ledger_as_of: iso(T0) };
    const prepared = await prepareAgreement(agreement, { now: T0 });
    const delegation = prepareDelegation(implicitDelegation(agreement, AGENT));
    return evaluate(delegation, prepared, action({ amount: 10, merchant: undefined, category: undefined }), context());
  }

  it("a short agreement (at most seven days) is allowed without re-confirmation", async () => {
    const signed = await buildSignedAgreement({ agreement_id: "agr-1", mandates: [m({ expires_at: iso(T0 + 2 * DAY) })], at: iso(T0 - DAY) }, principalKey);
    const prepared = await prepareAgreement({ ...signed, ledger_as_of: iso(T0) }, { now: T0 });
    const d = evaluate(prepareDelegation(implicitDelegation(signed, AGENT)), prepared, action({ amount: 10 }), context());
    expect(d).toMatchObject({ verdict: "ALLOW", reasons: [] });
  });

  it("a standing agreement signed within 30 days is allowed: the signature is its human approval", async () => {
    expect(await standing(T0 - 10 * DAY)).toMatchObject({ verdict: "ALLOW", reasons: [] });
  });

  it("a standing agreement not re-signed for 30 days steps up with RECONFIRMATION_OVERDUE", async () => {
    expect(await standing(T0 - 31 * DAY)).toMatchObject({ verdict: "STEP_UP", reasons: ["RECONFIRMATION_OVERDUE"] });
  });

  it("a later signing event (amended) re-confirms it", async () => {
    const d = await standing(T0 - 31 * DAY, (a) => {
      const last = a.events.at(-1);
      const amended = buildEvent(last, {
        event_id: "agr-1-amend",
        type: "amended",
        at: iso(T0 - 2 * DAY),
        actor: { role: "principal", id: PRINCIPAL.id },
        agreement_id: "agr-1",
        mandate_hash: last?.mandate_hash ?? mandateHash(a.mandates[0] as Mandate),
      });
      return { ...a, events: [...a.events, amended] };
    });
    expect(d).toMatchObject({ verdict: "ALLOW", reasons: [] });
  });
});
