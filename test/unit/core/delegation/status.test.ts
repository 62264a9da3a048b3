import { describe, expect, it } from "vitest";
import { prepareDelegation } from "../../../../src/core/delegation/prepare.js";
import { effectiveStatus, suspensionReason } from "../../../../src/core/evaluate/delegation-status.js";
import type { Delegation } from "../../../../src/core/delegation/types.js";
import { DEFAULT_POLICY, NO_REVOCATIONS, type Action, type EvalContext, type RevocationView } from "../../../../src/core/evaluate/types.js";

function grant(over: Partial<Delegation> = {}): Delegation {
  return {
    delegation_id: "del_c",
    principal: { type: "human", id: "alice" },
    agent: { agent_id: "a2" },
    granted_at: "2026-01-05T00:00:00Z",
    expires_at: "2026-01-10T00:00:00Z",
    purpose: "groceries",
    scope: { currency: "EUR", maximum_amount: 100 },
    conditions: [],
    revocable: true,
    delegation_chain: [
      {
        delegation_id: "del_a",
        delegator: { type: "human", id: "alice" },
        delegate: { agent_id: "a1" },
        delegated_at: "2026-01-01T00:00:00Z",
        expires_at: "2026-01-20T00:00:00Z",
        scope: { currency: "EUR", maximum_amount: 500 },
      },
    ],
    status: "active",
    ...over,
  };
}

const revokedIds = (ids: string[]): RevocationView => ({ isDelegationRevoked: (id) => ids.includes(id), isAgreementRevoked: () => false });

function ctx(nowIso: string, extra: Partial<EvalContext> = {}): EvalContext {
  return { now: Date.parse(nowIso), policy: DEFAULT_POLICY, revocations: NO_REVOCATIONS, ...extra };
}

// 2026-01-07 is a Wednesday.
const WED_NOON_UTC = "2026-01-07T12:00:00Z";

describe("effectiveStatus", () => {
  it("is active for a live grant whose conditions hold", () => {
    expect(effectiveStatus(prepareDelegation(grant()), ctx(WED_NOON_UTC))).toBe("active");
  });

  it("is revoked when the record, the revocation view or a link above says so", () => {
    expect(effectiveStatus(prepareDelegation(grant({ status: "revoked" })), ctx(WED_NOON_UTC))).toBe("revoked");
    expect(effectiveStatus(prepareDelegation(grant()), ctx(WED_NOON_UTC, { revocations: revokedIds(["del_c"]) }))).toBe("revoked");
    expect(effectiveStatus(prepareDelegation(grant()), ctx(WED_NOON_UTC, { revocations: revokedIds(["del_a"]) }))).toBe("revoked");
    // Revocation wins over expiry.
    expect(effectiveStatus(prepareDelegation(grant({ status: "revoked" })), ctx("2027-01-01T00:00:00Z"))).toBe("revoked");
  });

  it("is expired at expires_at (evaluation time), when the record says so, or when a link above expired", () => {
    const p = prepareDelegation(grant());
    expect(effectiveStatus(p, ctx("2026-01-09T23:59:59.999Z"))).toBe("active");
    expect(effectiveStatus(p, ctx("2026-01-10T00:00:00Z"))).toBe("expired");
    expect(effectiveStatus(prepareDelegation(grant({ status: "expired" })), ctx(WED_NOON_UTC))).toBe("expired");
    expect(effectiveStatus(prepareDelegation(grant({ expires_at: "soon" })), ctx(WED_NOON_UTC))).toBe("expired");
    const shortLink = grant();
    shortLink.delegation_chain[0]!.expires_at = "2026-01-06T00:00:00Z";
    expect(effectiveStatus(prepareDelegation(shortLink), ctx(WED_NOON_UTC))).toBe("expired");
  });

  it("is suspended when the record says so, a condition fails now, or the status is unknown", () => {
    expect(effectiveStatus(prepareDelegation(grant({ status: "suspended" })), ctx(WED_NOON_UTC))).toBe("suspended");
    expect(effectiveStatus(prepareDelegation(grant({ status: "paused" as Delegation["status"] })), ctx(WED_NOON_UTC))).toBe("suspended");
    const hours = prepareDelegation(grant({ conditions: [{ type: "business_hours_only", timezone: "Europe/Berlin" }] }));
    expect(effectiveStatus(hours, ctx(WED_NOON_UTC))).toBe("active");
    expect(effectiveStatus(hours, ctx("2026-01-07T17:00:00Z"))).toBe("suspended"); // 18:00 Berlin
    const window = prepareDelegation(grant({ conditions: [{ type: "time_window", start: "22:00", end: "06:00", timezone: "UTC" }] }));
    expect(effectiveStatus(window, ctx(WED_NOON_UTC))).toBe("suspended");
    expect(effectiveStatus(window, ctx("2026-01-07T23:00:00Z"))).toBe("active");
  });

  it("checks risk and presence only when the signal is given, and the allowlist only with an action", () => {
    const p = prepareDelegation(
      grant({ conditions: [{ type: "max_risk_score", value: 40 }, { type: "principal_present" }, { type: "merchant_allowlist", merchants: ["shop"] }] }),
    );
    expect(effectiveStatus(p, ctx(WED_NOON_UTC))).toBe("active");
    expect(effectiveStatus(p, ctx(WED_NOON_UTC, { riskScore: 41 }))).toBe("suspended");
    expect(effectiveStatus(p, ctx(WED_NOON_UTC, { principalPresent: false }))).toBe("suspended");
    const action: Action = { action_id: "x", action_type: "purchase", amount: 1, currency: "EUR", proposed_at: WED_NOON_UTC, merchant: "other" };
    expect(effectiveStatus(p, ctx(WED_NOON_UTC), action)).toBe("suspended");
    expect(effectiveStatus(p, ctx(WED_NOON_UTC), { ...action, merchant: "shop" })).toBe("active");
  });

  it("is suspended by a condition of unknown type", () => {
    const p = prepareDelegation(grant({ conditions: [{ type: "full_moon" } as unknown as Delegation["conditions"][number]] }));
    expect(effectiveStatus(p, ctx(WED_NOON_UTC))).toBe("suspended");
  });
});

describe("suspensionReason", () => {
  it("says in plain words why a grant is suspended: the failing time condition, or its declared state", () => {
    // 2026-01-10 is a Saturday; 10:00 UTC is 11:00 in Berlin.
    const hours = prepareDelegation(grant({ expires_at: "2026-01-15T00:00:00Z", conditions: [{ type: "business_hours_only", timezone: "Europe/Berlin" }] }));
    expect(suspensionReason(hours, ctx("2026-01-10T10:00:00Z"))).toBe(
      "suspended: Saturday 11:00 in Europe/Berlin is outside business hours (Monday-Friday 09:00-17:00) (OUTSIDE_BUSINESS_HOURS)",
    );
    expect(suspensionReason(hours, ctx(WED_NOON_UTC))).toBeUndefined();
    const window = prepareDelegation(grant({ conditions: [{ type: "time_window", start: "09:00", end: "17:00", timezone: "Europe/Berlin" }] }));
    expect(suspensionReason(window, ctx("2026-01-07T20:00:00Z"))).toBe("suspended: 21:00 in Europe/Berlin is outside 09:00-17:00 (OUTSIDE_TIME_WINDOW)");
    expect(suspensionReason(prepareDelegation(grant({ status: "suspended" })), ctx(WED_NOON_UTC))).toBe("suspended: its declared state is suspended");
    // Not suspended: revoked and expired have their own messages.
    expect(
      suspensionReason(
        prepareDelegation(grant({ status: "revoked", conditions: [{ type: "business_hours_only", timezone: "Europe/Berlin" }] })),
        ctx("2026-01-10T10:00:00Z"),
      ),
    ).toBeUndefined();
  });
});
