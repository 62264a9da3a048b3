/**
 * What reports count for, per reporting organization, so that no organization can move an
 * agent's standing further than one report of each effect (docs/registry.md, "Trust score",
 * "Abuse limits").
 *
 * Rules:
 * - an organization counts at most ONCE towards TRANSACTION_HISTORY (it filed at least one
 *   `transaction_outcome`), however many it files;
 * - of its adverse reports only the MOST SEVERE kind counts, once: `fraud_incident` over
 *   `policy_violation` over `chargeback`. So one organization lowers a score by at most 250
 *   points (one fraud incident), whatever it files and however often;
 * - `reporters` is the number of distinct organizations that reported on the agent (the
 *   cold-start rule counts them), `incidentReporters` those that reported a fraud incident;
 * - a contributor (who sees other reporters' evidence hashes) is an organization that has
 *   filed a report on the agent AND is named a payment-side party of one of the agent's
 *   agreements (a verified merchant, psp or issuer acknowledgement with its organization id,
 *   src/core/agreement/parties.ts): it has dealt with the agent, not only reported it.
 */
import type { ReportCounts } from "./score.js";
import type { ReportKind } from "./reports.js";

/** Adverse report kinds, most severe first. */
export const ADVERSE_BY_SEVERITY: readonly ReportKind[] = ["fraud_incident", "policy_violation", "chargeback"];

/** What the reports on one agent count for. */
export interface ReporterCounts {
  /** Organizations per score effect (the input of `scoreAgent`). */
  counts: ReportCounts;
  /** Distinct organizations that reported on the agent. */
  reporters: number;
  /** Distinct organizations that reported a fraud incident on the agent. */
  incidentReporters: number;
}

/** The counts from the report kinds each reporting organization filed on one agent (see the module comment). */
export function countReporters(kindsByOrg: Iterable<Iterable<ReportKind>>): ReporterCounts {
  const counts: Partial<Record<ReportKind, number>> = {};
  const bump = (k: ReportKind) => (counts[k] = (counts[k] ?? 0) + 1);
  let reporters = 0;
  let incidentReporters = 0;
  for (const kinds of kindsByOrg) {
    const filed = new Set(kinds);
    if (filed.size === 0) continue;
    reporters++;
    if (filed.has("transaction_outcome")) bump("transaction_outcome");
    const worst = ADVERSE_BY_SEVERITY.find((k) => filed.has(k));
    if (worst !== undefined) bump(worst);
    if (filed.has("fraud_incident")) incidentReporters++;
  }
  return { counts, reporters, incidentReporters };
}

/** True when an organization may see other reporters' evidence hashes (see the module comment). */
export function isContributor(hasReported: boolean, isPaymentParty: boolean): boolean {
  return hasReported && isPaymentParty;
}
