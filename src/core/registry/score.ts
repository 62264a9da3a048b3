/**
 * The trust score of an agent: a deterministic, pure function of the agent's verification
 * level, its registration time, the counts of ORGANIZATIONS per report effect (each reporting
 * organization counts once, for its most severe adverse kind: ./reporters.ts), the count of
 * revocations recorded against it, and `now`.
 *
 * Model (docs/registry.md, "Trust score"):
 *
 * | code                | points                                          |
 * |---------------------|-------------------------------------------------|
 * | VERIFICATION_LEVEL  | institution_attested 700, operator_verified 600, self_declared 450 |
 * | TRANSACTION_HISTORY | +5 per reporting organization, at most +150     |
 * | CHARGEBACK          | -60 per organization (chargeback its worst)     |
 * | POLICY_VIOLATION    | -100 per organization (policy_violation its worst) |
 * | FRAUD_INCIDENT      | -250 per organization that reported fraud       |
 * | REVOCATION          | -40 per revocation                              |
 *
 * score = the sum of the points, clamped to 0..1000. `reasons` lists VERIFICATION_LEVEL and
 * then every other code whose points are not zero, in the table's order. `cold_start` is true
 * while fewer than 5 organizations reported on the agent AND it was registered less than 30
 * days ago.
 */
import type { VerificationLevel } from "./agents.js";
import type { ReportKind } from "./reports.js";

/** Codes of the score's reasons. */
export type ScoreReasonCode = "VERIFICATION_LEVEL" | "TRANSACTION_HISTORY" | "CHARGEBACK" | "POLICY_VIOLATION" | "FRAUD_INCIDENT" | "REVOCATION";

/** One contribution to the score. */
export interface ScoreReason {
  code: ScoreReasonCode;
  points: number;
}

/** A computed trust score. */
export interface TrustScore {
  /** Integer 0..1000. */
  score: number;
  cold_start: boolean;
  reasons: ScoreReason[];
}

/** Counts of organizations per report effect (a missing kind counts 0): see ./reporters.ts. */
export type ReportCounts = Readonly<Partial<Record<ReportKind, number>>>;

/** What the score is computed from. */
export interface ScoreFacts {
  verification_level: VerificationLevel;
  registered_at: Date;
  reports: ReportCounts;
  /** Distinct reporting organizations (for the cold start); default: the sum of `reports`. */
  reporters?: number;
  revocations: number;
}

/** Lowest and highest score. */
export const SCORE_MIN = 0;
export const SCORE_MAX = 1000;

/** Base points by verification level. */
export const BASE_POINTS: Readonly<Record<VerificationLevel, number>> = {
  institution_attested: 700,
  operator_verified: 600,
  self_declared: 450,
};

/** Points per transaction_outcome report, and their cap. */
export const TRANSACTION_POINTS = 5;
export const TRANSACTION_POINTS_CAP = 150;

/** Points (negative) per adverse fact. */
export const PENALTY_POINTS = { CHARGEBACK: -60, POLICY_VIOLATION: -100, FRAUD_INCIDENT: -250, REVOCATION: -40 } as const;

/** Fewer reporting organizations than this (and a young agent) is a cold start. */
export const COLD_START_REPORTS = 5;

/** Younger than this (and few reports) is a cold start: 30 days. */
export const COLD_START_AGE_MS = 30 * 24 * 60 * 60 * 1000;

function count(n: number | undefined, what: string): number {
  const v = n ?? 0;
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${what} must be a non-negative integer`);
  return v;
}

/** The trust score of an agent at `now` (see the module comment). Throws RangeError on a bad count or date. */
export function scoreAgent(facts: ScoreFacts, now: Date): TrustScore {
  const base = BASE_POINTS[facts.verification_level];
  if (base === undefined) throw new RangeError("unknown verification level");
  const registered = facts.registered_at.getTime();
  if (!Number.isFinite(registered) || !Number.isFinite(now.getTime())) throw new RangeError("dates must be valid");
  const outcomes = count(facts.reports.transaction_outcome, "transaction_outcome count");
  const chargebacks = count(facts.reports.chargeback, "chargeback count");
  const violations = count(facts.reports.policy_violation, "policy_violation count");
  const frauds = count(facts.reports.fraud_incident, "fraud_incident count");
  const revocations = count(facts.revocations, "revocation count");

  const reasons: ScoreReason[] = [{ code: "VERIFICATION_LEVEL", points: base }];
  const add = (code: ScoreReasonCode, points: number) => {
    if (points !== 0) reasons.push({ code, points });
  };
  add("TRANSACTION_HISTORY", Math.min(outcomes * TRANSACTION_POINTS, TRANSACTION_POINTS_CAP));
  add("CHARGEBACK", chargebacks * PENALTY_POINTS.CHARGEBACK);
  add("POLICY_VIOLATION", violations * PENALTY_POINTS.POLICY_VIOLATION);
  add("FRAUD_INCIDENT", frauds * PENALTY_POINTS.FRAUD_INCIDENT);
  add("REVOCATION", revocations * PENALTY_POINTS.REVOCATION);

  const sum = reasons.reduce((s, r) => s + r.points, 0);
  const score = Math.min(SCORE_MAX, Math.max(SCORE_MIN, sum));
  const total = count(facts.reporters ?? outcomes + chargebacks + violations + frauds, "reporter count");
  const cold_start = total < COLD_START_REPORTS && now.getTime() - registered < COLD_START_AGE_MS;
  return { score, cold_start, reasons };
}
