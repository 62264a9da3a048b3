/**
 * The pure checks of the reconcilers on the signed samples: what passes, and each refusal with
 * its reason code, condition and a message naming the spec path; the effective view of a stored
 * delegation (status, expiry, when to look again).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sampleSigner } from "../../../../src/core/samples/index.js";
import { SAMPLE_NAMES, buildSamples, type Manifest } from "../../../../src/core/samples/index.js";
import { bindingRefusals, checkAgreementSpec, fullySigned } from "../../../../src/controller/reconcilers/agreement-checks.js";
import { checkDelegationSpec, delegationView } from "../../../../src/controller/reconcilers/delegation-checks.js";
import { checkSubscriptionSpec } from "../../../../src/controller/reconcilers/subscription.js";
import { prepareDelegation, type Delegation } from "../../../../src/core/delegation/index.js";

const AT = "2026-11-20T09:00:00Z";
const T = Date.parse("2026-11-23T10:30:00Z"); // a Monday, inside business hours in Berlin
let byName: Record<string, Manifest>;
const spec = (name: string): Record<string, unknown> => structuredClone(byName[name]?.spec ?? {});

beforeAll(async () => {
  byName = Object.fromEntries((await buildSamples(AT)).map((s) => [s.manifest.metadata.name, s.manifest]));
});

describe("checkDelegationSpec", () => {
  it("accepts the samples (a direct grant and a narrowing one-link chain)", async () => {
    for (const n of [SAMPLE_NAMES.delegation, SAMPLE_NAMES.chainedDelegation]) {
      const c = await checkDelegationSpec(spec(n), T);
      expect(c.refusals).toEqual([]);
      expect(c.record?.status).toBe("active");
    }
  });

  it("refuses a schema violation with SPEC_INVALID naming the spec path and the rule", async () => {
    const s = spec(SAMPLE_NAMES.delegation);
    (s.scope as Record<string, unknown>).currency = "euro";
    const c = await checkDelegationSpec(s, T);
    expect(c.record).toBeUndefined();
    expect(c.refusals).toEqual([{ condition: "Valid", code: "SPEC_INVALID", message: expect.stringMatching(/spec\.scope\.currency: .*pattern/) }]);
  });

  it("refuses a widening link with CHAIN_SCOPE_WIDENED naming the field", async () => {
    const s = spec(SAMPLE_NAMES.chainedDelegation);
    (s.scope as Record<string, unknown>).maximum_amount = 900;
    const c = await checkDelegationSpec(s, T);
    expect(c.refusals).toEqual([{ condition: "ChainValid", code: "CHAIN_SCOPE_WIDENED", message: expect.stringContaining("maximum_amount") }]);
  });

  it("refuses a broken chain with CHAIN_BROKEN", async () => {
    const s = spec(SAMPLE_NAMES.chainedDelegation);
    const link = (s.delegation_chain as Record<string, unknown>[])[0] as Record<string, unknown>;
    link.delegator = { type: "business", id: "org_other" };
    const c = await checkDelegationSpec(s, T);
    expect(c.refusals.map((r) => r.code)).toContain("CHAIN_BROKEN");
  });

  it("refuses a malformed condition with CONDITION_INVALID and a grant that ends before it starts with SPEC_INVALID", async () => {
    const s = spec(SAMPLE_NAMES.delegation);
    s.conditions = [{ type: "business_hours_only", timezone: "Mars/Olympus_Mons" }];
    s.expires_at = s.granted_at;
    const c = await checkDelegationSpec(s, T);
    expect(c.refusals).toEqual([
      { condition: "Valid", code: "CONDITION_INVALID", message: expect.stringMatching(/^spec\.conditions\[0\]: /) },
      { condition: "Valid", code: "SPEC_INVALID", message: expect.stringContaining("expires_at") },
    ]);
  });

  it("maps spec.state to the record's status", async () => {
    const s = spec(SAMPLE_NAMES.delegation);
    s.state = "revoked";
    expect((await checkDelegationSpec(s, T)).record?.status).toBe("revoked");
  });
});

describe("delegationView", () => {
  const record = async (name: string) => (await checkDelegationSpec(spec(name), T)).record as Delegation;

  it("with business hours: is active in them and looks again when they end (before the expiry)", async () => {
    const r = await record(SAMPLE_NAMES.delegation);
    r.conditions = [{ type: "business_hours_only", timezone: "Europe/Berlin" }];
    const v = delegationView(r, T, new Set());
    expect(v.effective).toBe("active");
    expect(v.suspended).toBeUndefined();
    expect(v.expiresAtMs).toBe(Date.parse("2026-11-27T09:00:00Z"));
    expect(v.nextChangeMs).toBe(Date.parse("2026-11-23T16:00:00Z")); // 17:00 in Berlin
  });

  it("with business hours: outside them is suspended and says why", async () => {
    const r = await record(SAMPLE_NAMES.delegation);
    r.conditions = [{ type: "business_hours_only", timezone: "Europe/Berlin" }];
    const v = delegationView(r, Date.parse("2026-11-22T10:00:00Z"), new Set()); // a Sunday
    expect(v.effective).toBe("suspended");
    expect(v.suspended).toBe("suspended: Sunday 11:00 in Europe/Berlin is outside business hours (Monday-Friday 09:00-17:00) (OUTSIDE_BUSINESS_HOURS)");
    expect(v.nextChangeMs).toBe(Date.parse("2026-11-23T08:00:00Z")); // Monday 09:00 in Berlin
  });

  it("the samples carry no time condition: active whatever the hour, nothing to look again for before the expiry", async () => {
    const v = delegationView(await record(SAMPLE_NAMES.delegation), Date.parse("2026-11-22T02:00:00Z"), new Set()); // Sunday night
    expect(v.effective).toBe("active");
    expect(v.nextChangeMs).toBe(Date.parse("2026-11-27T09:00:00Z"));
  });

  it("takes the earliest expiry of the grant and its chain, and is expired after it", async () => {
    const r = await record(SAMPLE_NAMES.chainedDelegation);
    r.delegation_chain[0]!.expires_at = "2026-11-22T09:00:00Z";
    const v = delegationView(r, T, new Set());
    expect(v.expiresAtMs).toBe(Date.parse("2026-11-22T09:00:00Z"));
    expect(v.effective).toBe("expired");
    expect(v.chainFindings.map((f) => f.code)).toEqual(["CHAIN_LINK_EXPIRED"]);
    expect(v.nextChangeMs).toBeUndefined();
  });

  it("is revoked when the store lists the grant or a link above it", async () => {
    const r = await record(SAMPLE_NAMES.chainedDelegation);
    const v = delegationView(r, T, new Set([r.delegation_chain[0]!.delegation_id]));
    expect(v.effective).toBe("revoked");
    expect(v.chainFindings.map((f) => f.code)).toEqual(["CHAIN_LINK_REVOKED"]);
  });
});

describe("checkAgreementSpec", () => {
  it("accepts the signed sample and reports it fully signed", async () => {
    const c = await checkAgreementSpec(spec(SAMPLE_NAMES.agreement), T);
    expect(c.refusals).toEqual([]);
    expect(c.delegationName).toBe(SAMPLE_NAMES.delegation);
    expect(c.prepared && fullySigned(c.prepared)).toBe(true);
  });

  it("refuses a tampered mandate with SIGNATURE_INVALID (condition Signed)", async () => {
    const s = spec(SAMPLE_NAMES.agreement);
    (s.mandates as Record<string, unknown>[])[0]!.maximum_amount = 251;
    const c = await checkAgreementSpec(s, T);
    expect(c.refusals).toEqual([
      { condition: "Signed", code: "SIGNATURE_INVALID", message: expect.stringMatching(/^spec\.mandates\[0\] \(intent int_office_supplies\)/) },
    ]);
  });

  it("refuses an unsigned mandate once the state requires signatures", async () => {
    const s = spec(SAMPLE_NAMES.agreement);
    const m = (s.mandates as Record<string, unknown>[])[1]!;
    delete m.signature;
    const c = await checkAgreementSpec(s, T);
    expect(c.refusals.map((r) => r.code)).toContain("SPEC_INVALID"); // the schema's conditional rule
  });

  it("requires delegationRef", async () => {
    const s = spec(SAMPLE_NAMES.agreement);
    delete s.delegationRef;
    expect((await checkAgreementSpec(s, T)).refusals[0]).toMatchObject({ code: "SPEC_INVALID", message: expect.stringContaining("spec.delegationRef.name") });
  });

  it("checks the mandates against the bound delegation: principal key, agent, bound intents", async () => {
    const c = await checkAgreementSpec(spec(SAMPLE_NAMES.agreement), T);
    const root = (await checkDelegationSpec(spec(SAMPLE_NAMES.delegation), T)).record as Delegation;
    expect(bindingRefusals(c.prepared!, prepareDelegation(root))).toEqual([]);
    const child = (await checkDelegationSpec(spec(SAMPLE_NAMES.chainedDelegation), T)).record as Delegation;
    expect([...new Set(bindingRefusals(c.prepared!, prepareDelegation(child)).map((r) => r.code))].sort()).toEqual(["AGENT_MISMATCH", "INTENT_NOT_BOUND"]);
    const otherKey = structuredClone(root);
    otherKey.principal.public_key = sampleSigner("travelAgent").publicJwk;
    const refusals = bindingRefusals(c.prepared!, prepareDelegation(otherKey));
    expect(refusals.map((r) => r.code)).toEqual(["PRINCIPAL_KEY_MISMATCH", "PRINCIPAL_KEY_MISMATCH"]);
    expect(refusals[0]?.message).toMatch(/^spec\.mandates\[0\] \(intent int_office_supplies\) is signed by sha256:/);
  });
});

describe("checkSubscriptionSpec", () => {
  it("accepts https and http on localhost, refuses the rest", () => {
    expect(checkSubscriptionSpec({ agentId: "a", webhookUrl: "https://hooks.example.com/x" })).toEqual({
      agentId: "a",
      webhookUrl: "https://hooks.example.com/x",
      refusals: [],
    });
    expect(checkSubscriptionSpec({ agentId: "a", webhookUrl: "http://127.0.0.1:8080/x" }).refusals).toEqual([]);
    expect(checkSubscriptionSpec({ agentId: "a", webhookUrl: "http://hooks.example.com/x" }).refusals[0]).toMatchObject({
      code: "SPEC_INVALID",
      message: expect.stringContaining("spec.webhookUrl"),
    });
    expect(checkSubscriptionSpec({ webhookUrl: "https://h/x" }).refusals[0]).toMatchObject({ message: expect.stringContaining("spec.agentId") });
    expect(checkSubscriptionSpec(null).refusals).toHaveLength(2);
  });
});
