import { describe, expect, it } from "vitest";
import { DelegationError } from "../../../../src/core/delegation/errors.js";
import { renewDelegation, silentExtension } from "../../../../src/core/delegation/renewal.js";
import type { Delegation } from "../../../../src/core/delegation/types.js";

const old: Delegation = {
  delegation_id: "del_1",
  principal: { type: "human", id: "alice" },
  agent: { agent_id: "a1" },
  granted_at: "2026-01-01T00:00:00Z",
  expires_at: "2026-01-01T04:00:00Z",
  purpose: "book a trip",
  scope: { currency: "EUR", maximum_amount: 500, merchants: ["air", "rail"] },
  conditions: [{ type: "max_risk_score", value: 50 }],
  revocable: true,
  delegation_chain: [],
  status: "active",
  approval: { type: "HUMAN_APPROVAL", approved_by: "alice", approved_at: "2025-12-31T00:00:00Z" },
  reconfirmed_at: "2026-01-01T01:00:00Z",
};

describe("silentExtension", () => {
  it("allows updates that do not extend authority", () => {
    expect(silentExtension(old, old)).toBeUndefined();
    expect(silentExtension(old, { ...old, expires_at: "2026-01-01T03:00:00Z", scope: { ...old.scope, maximum_amount: 100 }, purpose: "x" })).toBeUndefined();
    expect(silentExtension(old, { ...old, status: "suspended" })).toBeUndefined();
    expect(silentExtension(old, { ...old, conditions: [...old.conditions, { type: "principal_present" }] })).toBeUndefined();
  });

  it("names a later expiry and says renewal is a new grant", () => {
    expect(silentExtension(old, { ...old, expires_at: "2026-01-02T04:00:00Z" })).toBe(
      "expires_at moves later, from 2026-01-01T04:00:00Z to 2026-01-02T04:00:00Z: a renewal must be a new grant whose renewal_of names del_1",
    );
  });

  it("names widened scope and conditions", () => {
    expect(silentExtension(old, { ...old, scope: { ...old.scope, maximum_amount: 900 } })).toMatch(/^scope widens maximum_amount: 900.00 > 500.00 EUR/);
    expect(silentExtension(old, { ...old, conditions: [] })).toMatch(/^conditions: drops max_risk_score 50/);
  });

  it("catches other ways of extending a grant in place", () => {
    expect(silentExtension(old, { ...old, granted_at: "2025-12-01T00:00:00Z" })).toMatch(/^granted_at moves earlier/);
    expect(silentExtension({ ...old, status: "revoked" }, old)).toMatch(/^status moves from revoked to active/);
    expect(silentExtension({ ...old, status: "expired" }, { ...old, status: "suspended" })).toMatch(/^status moves from expired to suspended/);
    expect(silentExtension(old, { ...old, revocable: false })).toMatch(/^revocable changes/);
    expect(silentExtension({ ...old, privilege: "high" }, old)).toMatch(/^privilege lowers from high to standard/);
    expect(silentExtension(old, { ...old, agent: { agent_id: "a2" } })).toMatch(/^agent changes from a1 to a2/);
    expect(silentExtension(old, { ...old, principal: { type: "human", id: "bob" } })).toMatch(/^principal changes/);
    expect(silentExtension(old, { ...old, expires_at: "whenever" })).toMatch(/^expires_at "whenever" is unparseable/);
  });

  it("is not about different grants", () => {
    expect(silentExtension(old, { ...old, delegation_id: "del_2", expires_at: "2027-01-01T00:00:00Z" })).toBeUndefined();
  });
});

describe("renewDelegation", () => {
  it("builds a new grant naming the old one, without carried-over approval", () => {
    const renewed = renewDelegation(old, { delegation_id: "del_2", granted_at: "2026-01-01T04:00:00Z", expires_at: "2026-01-01T08:00:00Z" });
    expect(renewed).toMatchObject({
      delegation_id: "del_2",
      renewal_of: "del_1",
      granted_at: "2026-01-01T04:00:00Z",
      expires_at: "2026-01-01T08:00:00Z",
      status: "active",
      scope: old.scope,
      conditions: old.conditions,
      principal: old.principal,
      agent: old.agent,
    });
    expect(renewed.approval).toBeUndefined();
    expect(renewed.reconfirmed_at).toBeUndefined();
    expect(renewed.scope).not.toBe(old.scope); // a copy, not shared
  });

  it("takes a new scope and approval when given", () => {
    const approval = { type: "HUMAN_APPROVAL" as const, approved_by: "alice", approved_at: "2026-01-01T03:59:00Z" };
    const renewed = renewDelegation(
      { ...old, status: "expired" },
      {
        delegation_id: "del_3",
        granted_at: "2026-01-01T04:00:00Z",
        expires_at: "2026-01-01T08:00:00Z",
        scope: { currency: "EUR", maximum_amount: 50 },
        approval,
      },
    );
    expect(renewed.scope).toEqual({ currency: "EUR", maximum_amount: 50 });
    expect(renewed.approval).toEqual(approval);
    expect(renewed.status).toBe("active");
  });

  it("refuses to reuse the id or to build an empty or unparseable window", () => {
    const codeOf = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        return e instanceof DelegationError ? e.code : "other";
      }
      return undefined;
    };
    expect(codeOf(() => renewDelegation(old, { delegation_id: "del_1", granted_at: "2026-01-01T04:00:00Z", expires_at: "2026-01-01T08:00:00Z" }))).toBe(
      "RENEWAL_SAME_ID",
    );
    expect(codeOf(() => renewDelegation(old, { delegation_id: "", granted_at: "2026-01-01T04:00:00Z", expires_at: "2026-01-01T08:00:00Z" }))).toBe(
      "RENEWAL_SAME_ID",
    );
    expect(codeOf(() => renewDelegation(old, { delegation_id: "del_2", granted_at: "2026-01-01T04:00:00Z", expires_at: "2026-01-01T04:00:00Z" }))).toBe(
      "RENEWAL_WINDOW_INVALID",
    );
    expect(codeOf(() => renewDelegation(old, { delegation_id: "del_2", granted_at: "now", expires_at: "2026-01-01T04:00:00Z" }))).toBe(
      "RENEWAL_WINDOW_INVALID",
    );
  });
});
