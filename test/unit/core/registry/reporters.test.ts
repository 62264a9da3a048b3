/**
 * What one reporting organization can move: each counts once per effect (its outcomes once,
 * its most severe adverse kind once), so k colluding organizations move a score by at most
 * k × 250 downwards and k × 5 upwards: the worst-case table of docs/registry.md, checked.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BASE_POINTS,
  COLD_START_AGE_MS,
  REPORT_KINDS,
  VERIFICATION_LEVELS,
  countReporters,
  isContributor,
  scoreAgent,
  type ReportKind,
  type VerificationLevel,
} from "../../../../src/core/registry/index.js";

const NOW = new Date("2026-03-01T12:00:00Z");
const YOUNG = new Date(NOW.getTime() - 1000);

function scoreOf(level: VerificationLevel, kindsByOrg: ReportKind[][], registered = YOUNG) {
  const r = countReporters(kindsByOrg);
  return scoreAgent({ verification_level: level, registered_at: registered, reports: r.counts, reporters: r.reporters, revocations: 0 }, NOW);
}

describe("countReporters", () => {
  it("counts each organization once for its outcomes and once for its most severe adverse kind", () => {
    expect(countReporters([["fraud_incident", "fraud_incident", "chargeback", "policy_violation", "transaction_outcome"]])).toEqual({
      counts: { transaction_outcome: 1, fraud_incident: 1 },
      reporters: 1,
      incidentReporters: 1,
    });
    expect(countReporters([["chargeback", "policy_violation"], ["chargeback"], ["transaction_outcome"], []])).toEqual({
      counts: { policy_violation: 1, chargeback: 1, transaction_outcome: 1 },
      reporters: 3,
      incidentReporters: 0,
    });
  });

  it("one organization takes 600 down by at most 250, whatever and however often it reports", () => {
    expect(scoreOf("operator_verified", [["fraud_incident", "fraud_incident", "fraud_incident"]]).score).toBe(350);
    fc.assert(
      fc.property(fc.constantFrom(...VERIFICATION_LEVELS), fc.array(fc.constantFrom<ReportKind>(...REPORT_KINDS), { maxLength: 50 }), (level, kinds) => {
        const s = scoreOf(level, [kinds]).score;
        expect(s).toBeGreaterThanOrEqual(BASE_POINTS[level] - 250);
        expect(s).toBeLessThanOrEqual(BASE_POINTS[level] + 5);
      }),
      { numRuns: 300 },
    );
  });

  it("k colluding organizations move a score by at most k × 250 down and k × 5 up (the worst-case table)", () => {
    const table: Array<[VerificationLevel, number, number]> = [
      ["operator_verified", 1, 350],
      ["operator_verified", 2, 100],
      ["operator_verified", 3, 0],
      ["institution_attested", 1, 450],
      ["institution_attested", 2, 200],
      ["institution_attested", 3, 0],
      ["self_declared", 1, 200],
      ["self_declared", 2, 0],
    ];
    for (const [level, k, worst] of table) {
      expect(
        scoreOf(
          level,
          Array.from({ length: k }, () => ["fraud_incident", "chargeback", "policy_violation"]),
        ).score,
        `${level} ${k}`,
      ).toBe(worst);
    }
    expect(
      scoreOf(
        "operator_verified",
        Array.from({ length: 29 }, () => ["transaction_outcome", "transaction_outcome"]),
      ).score,
    ).toBe(745);
    expect(
      scoreOf(
        "operator_verified",
        Array.from({ length: 100 }, () => ["transaction_outcome"]),
      ).score,
    ).toBe(750);
  });

  it("ends the cold start with 5 distinct reporting organizations, not 5 reports of one", () => {
    expect(scoreOf("operator_verified", [Array.from({ length: 20 }, () => "transaction_outcome" as const)]).cold_start).toBe(true);
    expect(
      scoreOf(
        "operator_verified",
        Array.from({ length: 5 }, () => ["transaction_outcome"]),
      ).cold_start,
    ).toBe(false);
    expect(scoreOf("operator_verified", [], new Date(NOW.getTime() - COLD_START_AGE_MS)).cold_start).toBe(false);
  });
});

describe("isContributor", () => {
  it("needs both a report on the agent and a payment-party relation with it", () => {
    expect(isContributor(true, true)).toBe(true);
    expect(isContributor(true, false)).toBe(false);
    expect(isContributor(false, true)).toBe(false);
  });
});
