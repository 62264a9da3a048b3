import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { Ap2ImportError, importOpenPaymentMandate, type Ap2ImportOptions } from "../../../../src/core/mandates/index.js";
import { generateSigner, keyId } from "../../../../src/core/jose/index.js";
import { prepareDelegation } from "../../../../src/core/delegation/prepare.js";
import { prepareScope } from "../../../../src/core/delegation/scope.js";

const VECTORS = fileURLToPath(new URL("../../../vectors/ap2/", import.meta.url));
const readJson = (name: string): Record<string, unknown> => JSON.parse(readFileSync(VECTORS + name, "utf8")) as Record<string, unknown>;

const ajv = new Ajv2020({ strict: false });
for (const t of ["amount", "merchant", "payment_instrument", "pisp", "jwk"]) ajv.addSchema(readJson(`types/${t}.json`));
const validateSchema = ajv.compile(readJson("open_payment_mandate.json"));

const agent = generateSigner("ES256");
const other = generateSigner("ES256");
const NOW = Date.parse("2026-04-20T10:00:00Z");
const sec = (iso: string): number => Date.parse(iso) / 1000;

const opts: Ap2ImportOptions = {
  agentKey: agent.publicJwk,
  principal: { type: "human", id: "user_42" },
  delegationId: "del_ap2_1",
  now: NOW,
};

function realistic(): Record<string, unknown> {
  return {
    vct: "mandate.payment.open.1",
    constraints: [
      { type: "payment.amount_range", currency: "USD", max: 27999, min: 0 },
      { type: "payment.budget", currency: "USD", max: 1000 },
      {
        type: "payment.allowed_payees",
        allowed: [
          { id: "merchant_shoes", name: "Shoe Shop", website: "https://shoes.example" },
          { id: "merchant_socks", name: "Sock Shop" },
        ],
      },
      { type: "payment.agent_recurrence", frequency: "ON_DEMAND", max_occurrences: 3 },
      { type: "payment.execution_date", not_before: "2026-05-01", not_after: "2026-05-31T18:00:00Z" },
      { type: "payment.reference", conditional_transaction_id: "sha256-Vx3hXq0checkoutdigest" },
    ],
    cnf: { jwk: { ...agent.publicJwk, kid: "agent-key-1" } },
    iat: sec("2026-04-20T09:55:00Z"),
    exp: sec("2026-06-30T00:00:00Z"),
    risk_data: { device: "trusted-surface" },
  };
}

/** The error code (and subject) a failing import throws. */
function refusal(claims: unknown, o: Ap2ImportOptions = opts): { code: string; subject?: string; message: string } {
  try {
    importOpenPaymentMandate(claims, o);
  } catch (e) {
    if (e instanceof Ap2ImportError) return { code: e.code, subject: e.subject, message: e.message };
    throw e;
  }
  throw new Error("import did not refuse");
}

function withConstraints(...constraints: unknown[]): Record<string, unknown> {
  return { ...realistic(), constraints: [...constraints, { type: "payment.reference", conditional_transaction_id: "ref" }] };
}

describe("importOpenPaymentMandate", () => {
  it("the realistic fixture is valid against the AP2 schema", () => {
    expect(validateSchema(realistic()), JSON.stringify(validateSchema.errors)).toBe(true);
  });

  it("imports a realistic mandate to the expected delegation", () => {
    const d = importOpenPaymentMandate(realistic(), opts);
    expect(d).toEqual({
      delegation_id: "del_ap2_1",
      principal: { type: "human", id: "user_42" },
      agent: { agent_id: keyId(agent.publicJwk), public_key: agent.publicJwk },
      granted_at: "2026-05-01T00:00:00.000Z",
      expires_at: "2026-05-31T18:00:00.000Z",
      purpose: "AP2 open payment mandate bound to checkout sha256-Vx3hXq0checkoutdigest",
      scope: {
        currency: "USD",
        maximum_amount: 279.99,
        cumulative_maximum: 839.97, // min(budget 1000.00, 3 x 279.99)
        action_types: ["purchase"],
        merchants: ["merchant_shoes", "merchant_socks"],
        period_limits: [{ period: "total", count: 3 }], // max_occurrences 3, enforced as a count
      },
      conditions: [],
      revocable: true,
      delegation_chain: [],
      status: "active",
    });
    const prepared = prepareDelegation(d);
    expect(prepared.problems).toEqual([]);
    expect(prepared.scope.ceilingMinor).toBe(27999n);
    expect(prepared.scope.cumulativeMinor).toBe(83997n);
  });

  it("uses iat (else now) and exp when there is no execution window", () => {
    const c = withConstraints({ type: "payment.amount_range", currency: "USD", max: 5000 });
    expect(importOpenPaymentMandate(c, opts)).toMatchObject({ granted_at: "2026-04-20T09:55:00.000Z", expires_at: "2026-06-30T00:00:00.000Z" });
    const { iat: _iat, ...noIat } = c;
    expect(importOpenPaymentMandate(noIat, opts).granted_at).toBe("2026-04-20T10:00:00.000Z");
    expect(importOpenPaymentMandate({ ...c, nbf: sec("2026-04-21T00:00:00Z") }, opts).granted_at).toBe("2026-04-21T00:00:00.000Z");
  });

  it("reads a date-only not_after as the end of that UTC day", () => {
    const d = importOpenPaymentMandate(
      withConstraints({ type: "payment.amount_range", currency: "USD", max: 5000 }, { type: "payment.execution_date", not_after: "2026-05-31" }),
      opts,
    );
    expect(d.expires_at).toBe("2026-06-01T00:00:00.000Z");
  });

  it("without agent_recurrence is single-use: the cumulative maximum is one payment's ceiling", () => {
    const d = importOpenPaymentMandate(
      withConstraints({ type: "payment.amount_range", currency: "USD", max: 27999 }, { type: "payment.budget", currency: "USD", max: 1000 }),
      opts,
    );
    expect(d.scope).toMatchObject({ maximum_amount: 279.99, cumulative_maximum: 279.99 });
    const recurring = importOpenPaymentMandate(
      withConstraints(
        { type: "payment.amount_range", currency: "USD", max: 27999 },
        { type: "payment.budget", currency: "USD", max: 1000 },
        { type: "payment.agent_recurrence", frequency: "ON_DEMAND" },
      ),
      opts,
    );
    expect(recurring.scope).toMatchObject({ maximum_amount: 279.99, cumulative_maximum: 1000 });
  });

  it("converts JPY (exponent 0) and KWD (exponent 3) exactly", () => {
    const jpy = importOpenPaymentMandate(
      withConstraints(
        { type: "payment.amount_range", currency: "JPY", max: 15000 },
        { type: "payment.budget", currency: "JPY", max: 40000 },
        { type: "payment.agent_recurrence", frequency: "ON_DEMAND" },
      ),
      opts,
    );
    expect(jpy.scope).toMatchObject({ currency: "JPY", maximum_amount: 15000, cumulative_maximum: 40000 });
    const kwd = importOpenPaymentMandate(
      withConstraints(
        { type: "payment.amount_range", currency: "KWD", max: 12345 },
        { type: "payment.budget", currency: "KWD", max: 50.125 },
        { type: "payment.agent_recurrence", frequency: "ON_DEMAND" },
      ),
      opts,
    );
    expect(kwd.scope).toMatchObject({ currency: "KWD", maximum_amount: 12.345, cumulative_maximum: 50.125 });
    expect(prepareDelegation(kwd).scope.ceilingMinor).toBe(12345n);
    // A budget with more decimals than the currency has is refused, not rounded.
    expect(refusal(withConstraints({ type: "payment.budget", currency: "JPY", max: 10.5 }))).toMatchObject({
      code: "CONSTRAINT_INVALID",
      subject: "payment.budget",
    });
  });

  it("maps a pre-set payee and payment_amount", () => {
    const d = importOpenPaymentMandate(
      {
        ...withConstraints(
          { type: "payment.amount_range", currency: "EUR", max: 9000 },
          {
            type: "payment.allowed_payees",
            allowed: [
              { id: "m1", name: "One" },
              { id: "m2", name: "Two" },
            ],
          },
        ),
        payee: { id: "m2", name: "Two" },
        payment_amount: { amount: 4550, currency: "EUR" },
      },
      opts,
    );
    expect(d.scope).toMatchObject({ currency: "EUR", maximum_amount: 45.5, cumulative_maximum: 45.5, merchants: ["m2"] });
    expect(
      refusal({
        ...withConstraints({ type: "payment.allowed_payees", allowed: [{ id: "m1", name: "One" }] }, { type: "payment.budget", currency: "EUR", max: 5 }),
        payee: { id: "m9", name: "Nine" },
      }),
    ).toMatchObject({ code: "UNSATISFIABLE", subject: "payee" });
  });

  it("takes the agent id and approval from the options", () => {
    const approval = { type: "HUMAN_APPROVAL" as const, approved_by: "user_42", approved_at: "2026-04-20T09:55:00Z" };
    const d = importOpenPaymentMandate(realistic(), { ...opts, agentId: "agent_7", approval, actionTypes: ["purchase", "subscribe"] });
    expect(d.agent.agent_id).toBe("agent_7");
    expect(d.approval).toEqual(approval);
    expect(d.scope.action_types).toEqual(["purchase", "subscribe"]);
  });

  describe("refusals", () => {
    it("refuses a cnf that is not the agent's key", () => {
      expect(refusal({ ...realistic(), cnf: { jwk: other.publicJwk } })).toMatchObject({ code: "CNF_KEY_MISMATCH", subject: "cnf" });
      expect(refusal({ ...realistic(), cnf: { jwk: { ...agent.publicJwk, d: "c2VjcmV0" } } }).code).toBe("CNF_INVALID");
      expect(refusal({ ...realistic(), cnf: { kid: "agent-key-1" } }).code).toBe("CNF_INVALID");
      expect(refusal({ ...realistic(), cnf: { jwk: agent.publicJwk, jku: "https://x" } }).code).toBe("CNF_INVALID");
      const { cnf: _cnf, ...noCnf } = realistic();
      expect(refusal(noCnf).code).toBe("CNF_INVALID");
    });

    it("refuses an expired or missing exp", () => {
      expect(refusal({ ...realistic(), exp: sec("2026-04-20T10:00:00Z") })).toMatchObject({ code: "MANDATE_EXPIRED", subject: "exp" });
      expect(refusal({ ...realistic(), exp: sec("2025-01-01T00:00:00Z") }).code).toBe("MANDATE_EXPIRED");
      const { exp: _exp, ...noExp } = realistic();
      expect(refusal(noExp)).toMatchObject({ code: "CLAIMS_INVALID", subject: "exp" });
      expect(refusal({ ...realistic(), exp: "tomorrow" }).code).toBe("CLAIMS_INVALID");
      expect(
        refusal(withConstraints({ type: "payment.budget", currency: "USD", max: 5 }, { type: "payment.execution_date", not_after: "2026-04-19" })),
      ).toMatchObject({
        code: "MANDATE_EXPIRED",
        subject: "payment.execution_date",
      });
    });

    it("refuses an unknown constraint, naming it", () => {
      const r = refusal(withConstraints({ type: "payment.amount_range", currency: "USD", max: 100 }, { type: "payment.velocity", per_hour: 2 }));
      expect(r).toMatchObject({ code: "CONSTRAINT_UNSUPPORTED", subject: "payment.velocity" });
      expect(r.message).toContain('"payment.velocity"');
    });

    it("maps every agent_recurrence frequency to limits per period (UTC) instead of refusing it: a recurring mandate", () => {
      const scopeOf = (frequency: string, max_occurrences?: number) =>
        importOpenPaymentMandate(
          withConstraints(
            { type: "payment.amount_range", currency: "USD", max: 1000 },
            { type: "payment.budget", currency: "USD", max: 100 },
            { type: "payment.agent_recurrence", frequency, ...(max_occurrences !== undefined ? { max_occurrences } : {}) },
          ),
          opts,
        ).scope;
      expect(scopeOf("MONTHLY", 12)).toMatchObject({
        maximum_amount: 10,
        cumulative_maximum: 100,
        period_limits: [
          { period: "month", count: 1 },
          { period: "total", count: 12 },
        ],
      });
      expect(scopeOf("DAILY").period_limits).toEqual([{ period: "day", count: 1 }]);
      expect(scopeOf("WEEKLY").period_limits).toEqual([{ period: "week", count: 1 }]);
      expect(scopeOf("BIWEEKLY").period_limits).toEqual([{ rolling: "P14D", count: 1 }]);
      expect(scopeOf("QUARTERLY").period_limits).toEqual([{ period: "quarter", count: 1 }]);
      expect(scopeOf("ANNUALLY").period_limits).toEqual([{ period: "year", count: 1 }]);
      expect(scopeOf("ON_DEMAND", 3).period_limits).toEqual([{ period: "total", count: 3 }]);
      expect(scopeOf("ON_DEMAND").period_limits).toBeUndefined();
      // The scope is one a delegation stores (its schema) and verify prepares (UTC windows).
      expect(prepareScope(scopeOf("MONTHLY", 12)).periods?.timeZone).toBe("UTC");
    });

    it("refuses AP2 constraints Writ cannot enforce", () => {
      expect(refusal(withConstraints({ type: "payment.allowed_payment_instruments", allowed: [{ id: "card_1", type: "CARD" }] }))).toMatchObject({
        code: "CONSTRAINT_UNSUPPORTED",
        subject: "payment.allowed_payment_instruments",
      });
      expect(refusal(withConstraints({ type: "payment.allowed_pisps", allowed: [] })).subject).toBe("payment.allowed_pisps");
      expect(refusal(withConstraints({ type: "payment.amount_range", currency: "USD", max: 100, min: 1 }))).toMatchObject({
        code: "CONSTRAINT_UNENFORCEABLE",
        subject: "payment.amount_range",
      });
      expect(
        refusal(
          withConstraints({ type: "payment.amount_range", currency: "USD", max: 100 }, { type: "payment.amount_range", currency: "USD", max: 5, extra: true }),
        ),
      ).toMatchObject({
        code: "CONSTRAINT_DUPLICATE",
      });
      expect(refusal(withConstraints({ type: "payment.amount_range", currency: "USD", max: 100, max_per_day: 5 }))).toMatchObject({
        code: "CONSTRAINT_INVALID",
      });
    });

    it("refuses top-level claims it cannot honour or does not know", () => {
      expect(refusal({ ...realistic(), payment_instrument: { id: "card_1", type: "CARD" } })).toMatchObject({
        code: "CLAIM_UNSUPPORTED",
        subject: "payment_instrument",
      });
      expect(refusal({ ...realistic(), pisp: { legal_name: "P", brand_name: "P", domain_name: "p.example" } }).subject).toBe("pisp");
      expect(refusal({ ...realistic(), execution_date: "2026-05-02" }).subject).toBe("execution_date");
      expect(refusal({ ...realistic(), surprise: 1 })).toMatchObject({ code: "CLAIM_UNSUPPORTED", subject: "surprise" });
      expect(refusal({ ...realistic(), _sd: ["digest"] }).code).toBe("SD_JWT_UNPROCESSED");
    });

    it("refuses unusable options", () => {
      expect(refusal(realistic(), { ...opts, delegationId: "" }).code).toBe("OPTIONS_INVALID");
      expect(refusal(realistic(), { ...opts, now: Number.NaN }).code).toBe("OPTIONS_INVALID");
      expect(refusal(realistic(), { ...opts, principal: { type: "human", id: "" } }).code).toBe("OPTIONS_INVALID");
    });

    it("refuses the wrong vct and malformed claims", () => {
      expect(refusal({ ...realistic(), vct: "mandate.checkout.open.1" }).code).toBe("VCT_UNSUPPORTED");
      expect(refusal("claims").code).toBe("CLAIMS_INVALID");
      expect(refusal(null).code).toBe("CLAIMS_INVALID");
      expect(refusal({ ...realistic(), constraints: {} }).code).toBe("CLAIMS_INVALID");
      expect(refusal({ ...realistic(), constraints: [{ type: "payment.amount_range", currency: "USD", max: 100 }] })).toMatchObject({
        code: "CLAIMS_INVALID",
        subject: "payment.reference",
      });
      expect(refusal(withConstraints({ type: "payment.amount_range", currency: "usd", max: 100 })).code).toBe("CONSTRAINT_INVALID");
      expect(refusal(withConstraints({ type: "payment.amount_range", currency: "USD", max: 1.5 })).code).toBe("CONSTRAINT_INVALID");
      expect(refusal(withConstraints({ type: "payment.amount_range", currency: "USD", max: -1 })).code).toBe("CONSTRAINT_INVALID");
      expect(refusal(withConstraints({ type: "payment.allowed_payees", allowed: [{ name: "no id" }] })).code).toBe("CONSTRAINT_INVALID");
      expect(refusal(withConstraints({ type: "payment.allowed_payees", allowed: [{ "...": "digest" }] })).code).toBe("SD_JWT_UNPROCESSED");
      expect(refusal(withConstraints({ type: "payment.execution_date", not_before: "May 1st" })).code).toBe("CONSTRAINT_INVALID");
      expect(refusal({ ...realistic(), payment_amount: { amount: 1.5, currency: "USD" } }).code).toBe("CLAIMS_INVALID");
    });

    it("refuses mandates with no amount bound, mixed currencies or an empty window", () => {
      expect(refusal(withConstraints({ type: "payment.allowed_payees", allowed: [{ id: "m1", name: "One" }] })).code).toBe("NO_AMOUNT_BOUND");
      expect(
        refusal(withConstraints({ type: "payment.amount_range", currency: "USD", max: 100 }, { type: "payment.budget", currency: "EUR", max: 5 })).code,
      ).toBe("CURRENCY_MISMATCH");
      expect(
        refusal(withConstraints({ type: "payment.amount_range", currency: "USD", max: 100 }, { type: "payment.agent_recurrence", frequency: "ON_DEMAND" })),
      ).toMatchObject({
        code: "CONSTRAINT_INVALID",
        subject: "payment.agent_recurrence",
      });
      expect(
        refusal(
          withConstraints(
            { type: "payment.budget", currency: "USD", max: 5 },
            { type: "payment.execution_date", not_before: "2026-06-01", not_after: "2026-05-01" },
          ),
        ).code,
      ).toBe("UNSATISFIABLE");
      expect(refusal(withConstraints({ type: "payment.allowed_payees", allowed: [] })).code).toBe("UNSATISFIABLE");
    });
  });
});
