import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  COLD_START_AGE_MS,
  REPORT_KINDS,
  SCORE_DROP_THRESHOLD,
  VERIFICATION_LEVELS,
  alertForReport,
  scoreAgent,
  type ReportKind,
  type ScoreFacts,
} from "../../../../src/core/registry/index.js";

const NOW = new Date("2026-03-01T12:00:00Z");
const DAY = 24 * 60 * 60 * 1000;

function facts(over: Partial<ScoreFacts> = {}): ScoreFacts {
  return { verification_level: "operator_verified", registered_at: new Date(NOW.getTime() - DAY), reports: {}, revocations: 0, ...over };
}

describe("scoreAgent", () => {
  it("starts from the base of the verification level", () => {
    expect(scoreAgent(facts({ verification_level: "institution_attested" }), NOW)).toEqual({
      score: 700,
      cold_start: true,
      reasons: [{ code: "VERIFICATION_LEVEL", points: 700 }],
    });
    expect(scoreAgent(facts({ verification_level: "operator_verified" }), NOW).score).toBe(600);
    expect(scoreAgent(facts({ verification_level: "self_declared" }), NOW).score).toBe(450);
  });

  it("lists every non-zero contribution in the table's order", () => {
    const s = scoreAgent(facts({ reports: { transaction_outcome: 4, chargeback: 1, policy_violation: 1, fraud_incident: 1 }, revocations: 2 }), NOW);
    expect(s.reasons).toEqual([
      { code: "VERIFICATION_LEVEL", points: 600 },
      { code: "TRANSACTION_HISTORY", points: 20 },
      { code: "CHARGEBACK", points: -60 },
      { code: "POLICY_VIOLATION", points: -100 },
      { code: "FRAUD_INCIDENT", points: -250 },
      { code: "REVOCATION", points: -80 },
    ]);
    expect(s.score).toBe(600 + 20 - 60 - 100 - 250 - 80);
  });

  it("caps the transaction history bonus at +150", () => {
    const s = scoreAgent(facts({ reports: { transaction_outcome: 1000 } }), NOW);
    expect(s.reasons).toContainEqual({ code: "TRANSACTION_HISTORY", points: 150 });
    expect(s.score).toBe(750);
  });

  it("clamps the score to 0..1000", () => {
    expect(scoreAgent(facts({ reports: { fraud_incident: 10 } }), NOW).score).toBe(0);
  });

  it("is a cold start only with fewer than 5 reports AND younger than 30 days", () => {
    const young = new Date(NOW.getTime() - COLD_START_AGE_MS + 1);
    const old = new Date(NOW.getTime() - COLD_START_AGE_MS);
    expect(scoreAgent(facts({ registered_at: young, reports: { chargeback: 4 } }), NOW).cold_start).toBe(true);
    expect(scoreAgent(facts({ registered_at: young, reports: { chargeback: 2, transaction_outcome: 3 } }), NOW).cold_start).toBe(false);
    expect(scoreAgent(facts({ registered_at: old }), NOW).cold_start).toBe(false);
  });

  it("refuses negative or fractional counts", () => {
    expect(() => scoreAgent(facts({ revocations: -1 }), NOW)).toThrow(RangeError);
    expect(() => scoreAgent(facts({ reports: { chargeback: 1.5 } }), NOW)).toThrow(RangeError);
    expect(() => scoreAgent(facts({ registered_at: new Date(Number.NaN) }), NOW)).toThrow(RangeError);
  });

  const countsArb = fc.record({
    transaction_outcome: fc.nat(100),
    fraud_incident: fc.nat(5),
    chargeback: fc.nat(10),
    policy_violation: fc.nat(10),
  });

  it("is deterministic, an integer in 0..1000, and equal to the clamped sum of its reasons", () => {
    fc.assert(
      fc.property(fc.constantFrom(...VERIFICATION_LEVELS), countsArb, fc.nat(10), fc.integer({ min: -5, max: 100 }), (level, reports, revocations, ageDays) => {
        const f = facts({ verification_level: level, reports, revocations, registered_at: new Date(NOW.getTime() - ageDays * DAY) });
        const a = scoreAgent(f, NOW);
        expect(scoreAgent(f, NOW)).toEqual(a);
        expect(Number.isInteger(a.score)).toBe(true);
        expect(a.score).toBeGreaterThanOrEqual(0);
        expect(a.score).toBeLessThanOrEqual(1000);
        const sum = a.reasons.reduce((s, r) => s + r.points, 0);
        expect(a.score).toBe(Math.min(1000, Math.max(0, sum)));
      }),
      { numRuns: 200 },
    );
  });

  it("never rises with an adverse report and never falls with a transaction outcome", () => {
    fc.assert(
      fc.property(fc.constantFrom(...VERIFICATION_LEVELS), countsArb, fc.constantFrom<ReportKind>(...REPORT_KINDS), (level, reports, kind) => {
        const before = scoreAgent(facts({ verification_level: level, reports }), NOW).score;
        const after = scoreAgent(facts({ verification_level: level, reports: { ...reports, [kind]: reports[kind] + 1 } }), NOW).score;
        if (kind === "transaction_outcome") expect(after).toBeGreaterThanOrEqual(before);
        else expect(after).toBeLessThanOrEqual(before);
      }),
      { numRuns: 200 },
    );
  });
});

describe("alertForReport", () => {
  it("raises an incident alert for every fraud incident", () => {
    expect(alertForReport("fraud_incident", 0, 0)).toBe("incident");
    expect(alertForReport("fraud_incident", 700, 450)).toBe("incident");
  });

  it("raises a score_drop alert for a drop of 50 points or more, and nothing below", () => {
    expect(SCORE_DROP_THRESHOLD).toBe(50);
    expect(alertForReport("chargeback", 600, 550)).toBe("score_drop");
    expect(alertForReport("policy_violation", 600, 500)).toBe("score_drop");
    expect(alertForReport("chargeback", 600, 551)).toBeNull();
    expect(alertForReport("transaction_outcome", 600, 605)).toBeNull();
  });

  it("a chargeback on a fresh agent drops the score enough to alert; one at score 0 does not", () => {
    const before = scoreAgent(facts(), NOW).score;
    const after = scoreAgent(facts({ reports: { chargeback: 1 } }), NOW).score;
    expect(alertForReport("chargeback", before, after)).toBe("score_drop");
    const floor = facts({ reports: { fraud_incident: 3 } });
    const floorAfter = scoreAgent({ ...floor, reports: { fraud_incident: 3, chargeback: 1 } }, NOW).score;
    expect(alertForReport("chargeback", scoreAgent(floor, NOW).score, floorAfter)).toBeNull();
  });
});
