import { describe, expect, it } from "vitest";
import {
  AGENT_STATUSES,
  PRINCIPAL_ID_PATTERN,
  PURPOSE_CODES,
  REPORT_KINDS,
  VERIFICATION_LEVELS,
  canMoveAgent,
  isAgentId,
  isPurposeCode,
  isReportKind,
  isVerificationLevel,
  utcDay,
} from "../../../../src/core/registry/index.js";

describe("agent statuses", () => {
  it("moves between active and suspended, into retired, and never out of retired", () => {
    expect(canMoveAgent("active", "suspended")).toBe(true);
    expect(canMoveAgent("suspended", "active")).toBe(true);
    expect(canMoveAgent("active", "retired")).toBe(true);
    expect(canMoveAgent("suspended", "retired")).toBe(true);
    expect(canMoveAgent("retired", "active")).toBe(false);
    expect(canMoveAgent("retired", "suspended")).toBe(false);
    for (const s of AGENT_STATUSES) expect(canMoveAgent(s, s)).toBe(true);
  });
});

describe("vocabularies", () => {
  it("are closed lists", () => {
    expect([...VERIFICATION_LEVELS]).toEqual(["institution_attested", "operator_verified", "self_declared"]);
    expect(isVerificationLevel("bank_verified")).toBe(false);
    expect([...PURPOSE_CODES]).toEqual(["payment_authorization", "account_opening", "dispute_review", "fraud_investigation", "compliance_check"]);
    expect(isPurposeCode("marketing")).toBe(false);
    expect([...REPORT_KINDS]).toEqual(["transaction_outcome", "fraud_incident", "chargeback", "policy_violation"]);
    expect(isReportKind("refund")).toBe(false);
  });

  it("keeps e-mail addresses out of principal ids and odd characters out of agent ids", () => {
    const principal = new RegExp(PRINCIPAL_ID_PATTERN);
    expect(principal.test("prn_8f2a")).toBe(true);
    expect(principal.test("alice@example.com")).toBe(false);
    expect(principal.test("prn_alice@example.com")).toBe(false);
    expect(isAgentId("agent-42")).toBe(true);
    expect(isAgentId("did:web:agents.example.com")).toBe(true);
    expect(isAgentId("a/b")).toBe(false);
    expect(isAgentId("-x")).toBe(false);
    expect(isAgentId("x".repeat(129))).toBe(false);
  });

  it("counts the daily cap in UTC days", () => {
    expect(utcDay(new Date("2026-03-01T23:59:59.999Z"))).toBe("2026-03-01");
    expect(utcDay(new Date("2026-03-01T23:30:00-02:00"))).toBe("2026-03-02");
  });
});
