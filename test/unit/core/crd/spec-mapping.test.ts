import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agreementFromSpec, agreementSpecOf, delegationFromSpec, delegationSpecOf } from "../../../../src/core/crd/index.js";

const record = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !["state", "status", "delegationRef", "__proto__"].includes(k)),
  fc.jsonValue(),
  { maxKeys: 6 },
);
const status = fc.constantFrom("active", "suspended", "revoked", "expired", "proposed");

describe("delegation spec <-> record", () => {
  it("renames status to state and back, leaving every other field alone", () => {
    fc.assert(
      fc.property(record, status, (r, s) => {
        const rec = { ...r, status: s };
        const spec = delegationSpecOf(rec);
        expect(spec.status).toBeUndefined();
        expect(spec.state).toBe(s);
        expect(delegationFromSpec(spec)).toEqual(rec);
      }),
      { numRuns: 100 },
    );
  });

  it("reads an absent state as active (the CRD default)", () => {
    expect(delegationFromSpec({ delegation_id: "d" })).toEqual({ delegation_id: "d", status: "active" });
  });

  it("never lets a stray spec.status override spec.state", () => {
    expect(delegationFromSpec({ state: "revoked", status: "active" })).toEqual({ status: "revoked" });
    expect(delegationFromSpec({ status: "revoked" })).toEqual({ status: "active" });
  });

  it("maps a non-object spec to an empty record", () => {
    expect(delegationFromSpec(null)).toEqual({});
    expect(delegationFromSpec([1])).toEqual({});
  });
});

describe("agreement spec <-> record", () => {
  it("adds and takes out delegationRef, renames status to state", () => {
    fc.assert(
      fc.property(record, status, fc.string({ minLength: 1, maxLength: 20 }), (r, s, name) => {
        const rec = { ...r, status: s };
        const spec = agreementSpecOf(rec, name);
        expect(spec.delegationRef).toEqual({ name });
        expect(agreementFromSpec(spec)).toEqual({ record: rec, delegationName: name });
      }),
      { numRuns: 100 },
    );
  });

  it("has no delegation name when delegationRef is missing or malformed, and no default status", () => {
    expect(agreementFromSpec({ agreement_id: "a" })).toEqual({ record: { agreement_id: "a" }, delegationName: undefined });
    expect(agreementFromSpec({ delegationRef: { name: 7 } }).delegationName).toBeUndefined();
    expect(agreementFromSpec({ delegationRef: "x" }).delegationName).toBeUndefined();
  });
});
