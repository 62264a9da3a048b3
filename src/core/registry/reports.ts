/**
 * Reports on agents: the closed list of kinds, the daily cap's day, and when a report alerts
 * subscribers.
 *
 * Alert rule (docs/registry.md, "Alerts"): a `fraud_incident` report raises an `incident`
 * alert; any other report whose effect lowers the score by SCORE_DROP_THRESHOLD points or more
 * raises a `score_drop` alert; otherwise no alert. One report raises at most one alert.
 */

/** Report kinds. */
export const REPORT_KINDS = ["transaction_outcome", "fraud_incident", "chargeback", "policy_violation"] as const;

/** A report kind. */
export type ReportKind = (typeof REPORT_KINDS)[number];

/** True when `v` is one of REPORT_KINDS. */
export function isReportKind(v: unknown): v is ReportKind {
  return typeof v === "string" && (REPORT_KINDS as readonly string[]).includes(v);
}

/** Default per-organization daily report cap (setting BUR_REPORT_DAILY_CAP). */
export const DEFAULT_REPORT_DAILY_CAP = 1000;

/** Longest report summary accepted, in characters. */
export const MAX_SUMMARY_LENGTH = 2000;

/** A score drop of this many points or more alerts subscribers. */
export const SCORE_DROP_THRESHOLD = 50;

/** The UTC day (`YYYY-MM-DD`) the daily cap counts `now` in. */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** The alert a report raises, given the score before and after it, or null. */
export function alertForReport(kind: ReportKind, scoreBefore: number, scoreAfter: number): "incident" | "score_drop" | null {
  if (kind === "fraud_incident") return "incident";
  return scoreBefore - scoreAfter >= SCORE_DROP_THRESHOLD ? "score_drop" : null;
}
