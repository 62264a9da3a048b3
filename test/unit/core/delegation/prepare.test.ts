import { describe, expect, it } from "vitest";
import { prepareDelegation } from "../../../../src/core/delegation/prepare.js";
import type { Condition, Delegation } from "../../../../src/core/delegation/types.js";

function grant(over: Partial<Delegation> = {}): Delegation {
  return {
    delegation_id: "del_1",
    principal: { type: "human", id: "alice" },
    agent: { agent_id: "a1" },
    granted_at: "2026-01-01T00:00:00Z",
    expires_at: "2026-01-01T04:00:00+01:00",
    purpose: "book a trip",
    scope: { currency: "EUR", maximum_amount: 500.25, cumulative_maximum: 900, merchants: ["air"] },
    conditions: [{ type: "max_risk_score", value: 50 }],
    revocable: true,
    delegation_chain: [],
    status: "active",
    ...over,
  };
}

describe("prepareDelegation", () => {
  it("parses times, the scope and the chain once", () => {
    const p = prepareDelegation(grant({ reconfirmed_at: "2026-01-01T01:00:00Z" }));
    expect(p.grantedAtMs).toBe(Date.UTC(2026, 0, 1));
    expect(p.expiresAtMs).toBe(Date.UTC(2026, 0, 1, 3));
    expect(p.scope.ceilingMinor).toBe(50025n);
    expect(p.scope.cumulativeMinor).toBe(90000n);
    expect(p.scope.merchants).toEqual(new Set(["air"]));
    expect(p.conditions).toEqual([{ type: "max_risk_score", value: 50 }]);
    expect(p.chain).toEqual([]);
    expect(p.chainBroken).toBeUndefined();
    expect(p.reconfirmedAtMs).toBe(Date.UTC(2026, 0, 1, 1));
    expect(p.problems).toEqual([]);
  });

  it("treats unparseable times as already expired, without throwing", () => {
    const a = prepareDelegation(grant({ expires_at: "tomorrow" }));
    expect(a.expiresAtMs).toBe(0);
    expect(a.problems).toEqual(['expires_at "tomorrow" is not an RFC 3339 date-time; treated as expired']);
    const b = prepareDelegation(grant({ granted_at: "2026-02-30T00:00:00Z" }));
    expect(b.expiresAtMs).toBe(0);
    expect(b.problems[0]).toMatch(/^granted_at/);
    const c = prepareDelegation(grant({ expires_at: "2025-12-31T00:00:00Z" }));
    expect(c.expiresAtMs).toBe(0);
    expect(c.problems[0]).toMatch(/is not after granted_at/);
  });

  it("fails closed on an unusable scope: zero ceilings, expired", () => {
    const p = prepareDelegation(grant({ scope: { currency: "JPY", maximum_amount: 1.5 } }));
    expect(p.scope.ceilingMinor).toBe(0n);
    expect(p.scope.cumulativeMinor).toBe(0n);
    expect(p.expiresAtMs).toBe(0);
    expect(p.problems[0]).toMatch(/^scope is unusable/);
    expect(prepareDelegation(grant({ scope: null as unknown as Delegation["scope"] })).expiresAtMs).toBe(0);
  });

  it("lists malformed conditions without expiring the grant; conditions that are not a list expire it", () => {
    const p = prepareDelegation(grant({ conditions: [{ type: "time_window", start: "22:00", end: "06:00", timezone: "Mars/Base" } as Condition] }));
    expect(p.expiresAtMs).toBe(Date.UTC(2026, 0, 1, 3));
    expect(p.problems).toEqual(['condition 1: time_window timezone "Mars/Base" is not an IANA time zone']);
    const q = prepareDelegation(grant({ conditions: "none" as unknown as Condition[] }));
    expect(q.expiresAtMs).toBe(0);
    expect(q.conditions).toEqual([]);
  });

  it("ignores an unparseable reconfirmed_at and says so", () => {
    const p = prepareDelegation(grant({ reconfirmed_at: "recently" }));
    expect(p.reconfirmedAtMs).toBeUndefined();
    expect(p.problems).toEqual(['reconfirmed_at "recently" is not an RFC 3339 date-time; ignored']);
  });

  it("carries the chain facts", () => {
    const p = prepareDelegation(
      grant({
        delegation_chain: [
          {
            delegation_id: "del_0",
            delegator: { type: "human", id: "bob" },
            delegate: { agent_id: "a0" },
            delegated_at: "2025-12-01T00:00:00Z",
            expires_at: "2026-02-01T00:00:00Z",
            scope: { currency: "EUR" },
          },
        ],
      }),
    );
    expect(p.chain).toHaveLength(1);
    expect(p.chainBroken).toMatch(/not by the root principal human:alice/);
  });
});
