/**
 * Filing a report with all its effects in ONE transaction (so they all happen or none does):
 * lock the agent, read its standing, store the report under the daily cap, log a fraud
 * incident, compare the score before and after, and write ONE fan-out of the alert
 * (src/store/alert-fanout.ts). The fan-out is expanded into one outbox row per active
 * subscription AFTER the transaction commits (here at once; a delivery worker expands it if
 * this process dies first), so the transaction and its agent lock stay short however many
 * organizations subscribe.
 *
 * Incident log entry (kind `incident`): `{report_id, agent_id, kind: "fraud_incident", at,
 * evidence_commitment}` where `evidence_commitment = hashOf({evidence_hash, report_id})`: it
 * binds the evidence without publishing the hash (evidence hashes go to contributors only),
 * and anyone who holds the evidence hash can check it. The reporter is not logged.
 *
 * Alert (src/core/registry/reports.ts `alertForReport`): `{event_id, type: incident |
 * score_drop, agent_id, at, details: {report_id, kind, previous_score, score}}`.
 */
import type { FastifyInstance } from "fastify";
import { hashOf } from "../../../core/canonical/index.js";
import type { Signer } from "../../../core/jose/index.js";
import { alertForReport, type ReportKind } from "../../../core/registry/index.js";
import {
  getAgent,
  agreementFacts,
  standingFrom,
  appendLogEntries,
  type LogAppendInput,
  withTransaction,
  fileReport,
  reporterCounts,
  type ReportInput,
  type StoredReport,
  enqueueFanout,
  expandFanouts,
  newEventId,
} from "../../../store/index.js";
import { ApiError } from "../../errors.js";
import { logAppendOptions } from "../shared/registry-log.js";

/** What the route passes: the report, the log signer (needed for a fraud incident), the time. */
export interface FileRequest {
  input: ReportInput;
  signer: Signer | null;
  now: Date;
}

/** What was done. */
export interface FileResult {
  report_id: string;
  kind: ReportKind;
  /** The alert raised, if any. */
  alert: "incident" | "score_drop" | null;
  /** How many subscriptions were alerted (null: a delivery worker expanded the fan-out). */
  alerted: number | null;
}

/** The transparency log entry of a fraud incident (see the module comment). */
export function incidentLogEntry(report: StoredReport): LogAppendInput {
  return {
    kind: "incident",
    body: {
      report_id: report.report_id,
      agent_id: report.agent_id,
      kind: report.kind,
      at: report.created_at,
      evidence_commitment: hashOf({ evidence_hash: report.evidence_hash, report_id: report.report_id }),
    },
  };
}

/** Files the report with its effects; throws the 404/409/429 ApiErrors. */
export async function fileReportWithEffects(app: FastifyInstance, req: FileRequest): Promise<FileResult> {
  const pool = app.requireDb();
  const { fanout, ...filed } = await fileInTransaction(app, req);
  if (fanout === null) return { ...filed, alerted: 0 };
  try {
    const done = await expandFanouts(pool, { ids: [fanout] });
    return { ...filed, alerted: done.fanouts === 1 ? done.alerted : null };
  } catch (err) {
    app.log.warn({ err, report_id: filed.report_id }, "alert fan-out after the report failed; the delivery worker will expand it");
    return { ...filed, alerted: null };
  }
}

async function fileInTransaction(app: FastifyInstance, req: FileRequest): Promise<Omit<FileResult, "alerted"> & { fanout: string | null }> {
  const { input, now } = req;
  return withTransaction(app.requireDb(), async (client) => {
    const agent = await getAgent(client, input.agent_id, { forUpdate: true });
    if (!agent) throw new ApiError("AGENT_NOT_FOUND");
    const facts = await agreementFacts(client, agent.agent_id);
    const before = standingFrom(agent, await reporterCounts(client, agent.agent_id), facts, now);

    const filed = await fileReport(client, input, app.settings.reportDailyCap, now);
    if (!filed.ok) throw new ApiError(filed.refused === "duplicate" ? "REPORT_DUPLICATE" : "REPORT_CAP_REACHED");
    const report = filed.report;

    // Re-counted with the new report: a second report of one organization may move nothing.
    const after = standingFrom(agent, await reporterCounts(client, agent.agent_id), facts, now);
    if (report.kind === "fraud_incident") {
      if (req.signer === null) throw new ApiError("INTERNAL");
      await appendLogEntries(client, [incidentLogEntry(report)], req.signer, logAppendOptions(app, now));
    }

    const alert = alertForReport(report.kind, before.trust_score.score, after.trust_score.score);
    const fanout =
      alert === null
        ? null
        : await enqueueFanout(client, agent.agent_id, {
            event_id: newEventId(),
            type: alert,
            agent_id: agent.agent_id,
            at: now.toISOString(),
            details: { report_id: report.report_id, kind: report.kind, previous_score: before.trust_score.score, score: after.trust_score.score },
          });
    return { report_id: report.report_id, kind: report.kind, alert, fanout };
  });
}
