import { describe, expect, it } from "vitest";
import { STANDING_LIFETIME_MS, privilegeOf } from "../../../../src/core/delegation/approval.js";
import { evaluateApproval } from "../../../../src/core/evaluate/delegation-approval.js";
import { prepareDelegation } from "../../../../src/core/delegation/prepare.js";
import type { Delegation } from "../../../../src/core/delegation/types.js";
import { DEFAULT_POLICY, NO_REVOCATIONS, type EvalContext } from "../../../../src/core/evaluate/types.js";

const DAY = 86_400_000;

function grant(over: Partial<Delegation> = {}): Delegation {
  return {
    delegation_id: "del_1",
    principal: { type: "human", id: "alice" },
    agent: { agent_id: "a1" },
    granted_at: "2026-01-01T00:00:00Z",
    expires_at: "2026-01-01T04:00:00Z",
    purpose: "book a trip",
    scope: { currency: "EUR", maximum_amount: 500 },
    conditions: [],
    revocable: true,
    delegation_chain: [],
    status: "active",
    ...over,
  };
}

const standing = (over: Partial<Delegation> = {}): Delegation =>
  grant({
    expires_at: "2026-06-01T00:00:00Z",
    approval: { type: "HUMAN_APPROVAL", approved_by: "alice", approved_at: "2025-12-31T23:00:00Z" },
    ...over,
  });

function ctx(nowIso: string, policy = DEFAULT_POLICY): EvalContext {
  return { now: Date.parse(nowIso), policy, revocations: NO_REVOCATIONS };
}

describe("privilegeOf", () => {
  it("is standard for short grants and standing above seven days", () => {
    expect(privilegeOf(grant())).toBe("standard");
    const start = Date.parse("2026-01-01T00:00:00Z");
    expect(privilegeOf(grant({ expires_at: new Date(start + STANDING_LIFETIME_MS).toISOString() }))).toBe("standard");
    expect(privilegeOf(grant({ expires_at: new Date(start + STANDING_LIFETIME_MS + 1).toISOString() }))).toBe("standing");
  });

  it("honours an explicit privilege that raises, never one that lowers a long-lived grant", () => {
    expect(privilegeOf(grant({ privilege: "high" }))).toBe("high");
    expect(privilegeOf(grant({ privilege: "standing" }))).toBe("standing");
    expect(privilegeOf(grant({ privilege: "standard", expires_at: "2027-01-01T00:00:00Z" }))).toBe("standing");
    expect(privilegeOf(grant({ privilege: "high", expires_at: "2027-01-01T00:00:00Z" }))).toBe("high");
  });

  it("treats unparseable times as standing (fail closed)", () => {
    expect(privilegeOf(grant({ expires_at: "later" }))).toBe("standing");
  });
});

describe("evaluateApproval", () => {
  it("asks nothing of a standard grant", () => {
    expect(evaluateApproval(prepareDelegation(grant()), ctx("2026-01-01T01:00:00Z"))).toEqual([]);
  });

  it("is empty for an approved standing grant within the re-confirmation period", () => {
    expect(evaluateApproval(prepareDelegation(standing()), ctx("2026-01-20T00:00:00Z"))).toEqual([]);
  });

  it("fires HUMAN_APPROVAL_MISSING without valid approval evidence", () => {
    const now = ctx("2026-01-02T00:00:00Z");
    expect(evaluateApproval(prepareDelegation(standing({ approval: undefined })), now)).toEqual([
      { code: "HUMAN_APPROVAL_MISSING", message: "this standing delegation carries no approval" },
    ]);
    const policyApproval = standing({ approval: { type: "POLICY" as "HUMAN_APPROVAL", approved_by: "bot", approved_at: "2025-12-31T00:00:00Z" } });
    expect(evaluateApproval(prepareDelegation(policyApproval), now)[0]?.message).toMatch(/type "POLICY", not HUMAN_APPROVAL/);
    const late = standing({ approval: { type: "HUMAN_APPROVAL", approved_by: "alice", approved_at: "2026-01-01T00:00:01Z" } });
    expect(evaluateApproval(prepareDelegation(late), now)[0]?.message).toMatch(/approved at 2026-01-01T00:00:01Z, after it was granted/);
    const anonymous = standing({ approval: { type: "HUMAN_APPROVAL", approved_by: "", approved_at: "2025-12-31T00:00:00Z" } });
    expect(evaluateApproval(prepareDelegation(anonymous), now)[0]?.code).toBe("HUMAN_APPROVAL_MISSING");
    const badTime = standing({ approval: { type: "HUMAN_APPROVAL", approved_by: "alice", approved_at: "yesterday" } });
    expect(evaluateApproval(prepareDelegation(badTime), now)[0]?.code).toBe("HUMAN_APPROVAL_MISSING");
    const high = grant({ privilege: "high" });
    expect(evaluateApproval(prepareDelegation(high), ctx("2026-01-01T01:00:00Z"))).toEqual([
      { code: "HUMAN_APPROVAL_MISSING", message: "this high delegation carries no approval" },
    ]);
  });

  it("fires RECONFIRMATION_OVERDUE after the period since the approval", () => {
    const p = prepareDelegation(standing());
    const approvedAt = Date.parse("2025-12-31T23:00:00Z");
    const at = (ms: number): EvalContext => ({ ...ctx("2026-01-01T00:00:00Z"), now: ms });
    expect(evaluateApproval(p, at(approvedAt + DEFAULT_POLICY.reconfirmEveryMs))).toEqual([]);
    expect(evaluateApproval(p, at(approvedAt + DEFAULT_POLICY.reconfirmEveryMs + 1))).toEqual([
      {
        code: "RECONFIRMATION_OVERDUE",
        message: "this standing delegation was last confirmed at 2025-12-31T23:00:00.000Z (30 days ago); it must be re-confirmed every 30 days",
      },
    ]);
  });

  it("counts from reconfirmed_at, ignoring one in the future", () => {
    const p = prepareDelegation(standing({ reconfirmed_at: "2026-02-15T00:00:00Z" }));
    expect(evaluateApproval(p, ctx("2026-03-10T00:00:00Z"))).toEqual([]);
    expect(evaluateApproval(p, ctx("2026-03-18T00:00:00Z"))[0]?.code).toBe("RECONFIRMATION_OVERDUE");
    const future = prepareDelegation(standing({ reconfirmed_at: "2030-01-01T00:00:00Z" }));
    expect(evaluateApproval(future, ctx("2026-03-10T00:00:00Z"))[0]?.code).toBe("RECONFIRMATION_OVERDUE");
  });

  it("counts from granted_at when there is no valid approval, and honours the policy period", () => {
    const p = prepareDelegation(standing({ approval: undefined }));
    const out = evaluateApproval(p, ctx("2026-01-03T00:00:00Z", { ...DEFAULT_POLICY, reconfirmEveryMs: DAY }));
    expect(out.map((f) => f.code)).toEqual(["HUMAN_APPROVAL_MISSING", "RECONFIRMATION_OVERDUE"]);
  });
});
