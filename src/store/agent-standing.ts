/**
 * An agent's standing: the facts an inquiry, the agent record and a report's score change are
 * made of — what the reports count for (organizations per effect, src/core/registry/
 * reporters.ts), revocations, active authorizations — and the trust score computed from them
 * (src/core/registry/score.ts).
 *
 * Revocations and active authorizations belong to the agreement/verify area: they are read
 * through the SQL functions `registry_revocation_count(agent_id)` and
 * `registry_active_authorizations(agent_id)` (migrations/0030_registry.sql), which answer 0
 * until that area's migration replaces them with counts over its own tables.
 */
import { scoreAgent, type ReportCounts, type ReporterCounts, type TrustScore } from "../core/registry/index.js";
import type { AgentRecord } from "./agents.js";
import type { Queryable } from "./pool.js";
import { reporterCounts } from "./reports.js";

/** An agent's standing at one moment. */
export interface AgentStanding {
  trust_score: TrustScore;
  /** Organizations per report effect. */
  reports: ReportCounts;
  /** Distinct organizations that reported on the agent. */
  reporters: number;
  revocations: number;
  active_authorizations: number;
  /** Distinct organizations that reported a fraud incident. */
  incidents: number;
}

/** Revocations and active authorizations of `agentId` (see the module comment). */
export async function agreementFacts(q: Queryable, agentId: string): Promise<{ revocations: number; active_authorizations: number }> {
  const { rows } = await q.query<{ revocations: string; active: string }>(
    "SELECT registry_revocation_count($1) AS revocations, registry_active_authorizations($1) AS active",
    [agentId],
  );
  return { revocations: Number(rows[0]?.revocations ?? 0), active_authorizations: Number(rows[0]?.active ?? 0) };
}

/** The standing of `agent` at `now` (queries run one after the other: `q` may be one client). */
export async function agentStanding(q: Queryable, agent: AgentRecord, now: Date): Promise<AgentStanding> {
  const reports = await reporterCounts(q, agent.agent_id);
  const facts = await agreementFacts(q, agent.agent_id);
  return standingFrom(agent, reports, facts, now);
}

/** The standing of `agent` from already-read counts. */
export function standingFrom(
  agent: AgentRecord,
  reports: ReporterCounts,
  facts: { revocations: number; active_authorizations: number },
  now: Date,
): AgentStanding {
  const trust_score = scoreAgent(
    {
      verification_level: agent.verification_level,
      registered_at: agent.registered_at,
      reports: reports.counts,
      reporters: reports.reporters,
      revocations: facts.revocations,
    },
    now,
  );
  return { trust_score, reports: reports.counts, reporters: reports.reporters, ...facts, incidents: reports.incidentReporters };
}
