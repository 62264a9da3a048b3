/**
 * Reports on agents (table `reports`) and the per-organization daily cap (table
 * `report_daily_counts`), migrations/0030_registry.sql.
 *
 * Promise: `fileReport` runs inside the caller's transaction and is race-free: a duplicate
 * (same reporter organization, agent, kind and evidence hash) is detected by the unique
 * constraint, and the day's count is incremented on one counter row whose row lock serialises
 * concurrent reports of one organization, so at most `cap` reports of an organization are
 * committed per UTC day. A refused report writes nothing the caller's commit would keep,
 * provided the caller rolls back on `{ok: false}` (the counter increment is undone with it).
 */
import { randomBytes } from "node:crypto";
import type { HashString } from "../core/canonical/index.js";
import { countReporters, formatId, ID_RANDOM_BYTES, utcDay, type ReporterCounts, type ReportKind } from "../core/registry/index.js";
import type { Queryable } from "./pool.js";

/** A report to file. */
export interface ReportInput {
  org_id: string;
  key_id: string;
  agent_id: string;
  kind: ReportKind;
  evidence_hash: HashString;
  summary: string;
}

/** A filed report. */
export interface StoredReport {
  report_id: string;
  org_id: string;
  agent_id: string;
  kind: ReportKind;
  evidence_hash: HashString;
  /** RFC 3339, UTC. */
  created_at: string;
}

/** The outcome of `fileReport`; on `{ok: false}` the caller must roll back. */
export type FileReportOutcome = { ok: true; report: StoredReport } | { ok: false; refused: "duplicate" | "cap" };

/**
 * Files a report at `now` in the caller's transaction, unless it is a duplicate or the
 * organization already filed `cap` reports on `now`'s UTC day (see the module comment).
 */
export async function fileReport(q: Queryable, input: ReportInput, cap: number, now: Date): Promise<FileReportOutcome> {
  const reportId = formatId("report", randomBytes(ID_RANDOM_BYTES));
  const inserted = await q.query<{ created_at: Date }>(
    `INSERT INTO reports (report_id, org_id, key_id, agent_id, kind, evidence_hash, summary, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT ON CONSTRAINT reports_duplicate_key DO NOTHING RETURNING created_at`,
    [reportId, input.org_id, input.key_id, input.agent_id, input.kind, input.evidence_hash, input.summary, now],
  );
  if (!inserted.rows[0]) return { ok: false, refused: "duplicate" };
  const counted = await q.query<{ count: number }>(
    `INSERT INTO report_daily_counts (org_id, day, count) VALUES ($1, $2::date, 1)
     ON CONFLICT (org_id, day) DO UPDATE SET count = report_daily_counts.count + 1 RETURNING count`,
    [input.org_id, utcDay(now)],
  );
  if ((counted.rows[0]?.count ?? Infinity) > cap) return { ok: false, refused: "cap" };
  return {
    ok: true,
    report: {
      report_id: reportId,
      org_id: input.org_id,
      agent_id: input.agent_id,
      kind: input.kind,
      evidence_hash: input.evidence_hash,
      created_at: inserted.rows[0].created_at.toISOString(),
    },
  };
}

/** The report kinds each organization has filed on `agentId`, by organization id. */
export async function reportKindsByOrg(q: Queryable, agentId: string): Promise<Map<string, ReportKind[]>> {
  const { rows } = await q.query<{ org_id: string; kinds: ReportKind[] }>(
    "SELECT org_id, array_agg(DISTINCT kind) AS kinds FROM reports WHERE agent_id = $1 GROUP BY org_id",
    [agentId],
  );
  return new Map(rows.map((r) => [r.org_id, r.kinds]));
}

/** What the reports on `agentId` count for: organizations per effect (src/core/registry/reporters.ts). */
export async function reporterCounts(q: Queryable, agentId: string): Promise<ReporterCounts> {
  return countReporters((await reportKindsByOrg(q, agentId)).values());
}

/** The evidence hashes of the `limit` most recent reports on `agentId` (any reporter), newest first. */
export async function recentEvidenceHashes(q: Queryable, agentId: string, limit: number): Promise<HashString[]> {
  const { rows } = await q.query<{ evidence_hash: HashString }>("SELECT evidence_hash FROM reports WHERE agent_id = $1 ORDER BY seq DESC LIMIT $2", [
    agentId,
    limit,
  ]);
  return rows.map((r) => r.evidence_hash);
}
