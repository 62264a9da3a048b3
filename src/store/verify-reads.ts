/**
 * The small reads of the verify routes: what a verify reads of an agent (the agent, its recent
 * denials for the DENIED_ATTEMPT_BURST policy, and its candidate agreements; kept in memory by
 * src/verify/gather/candidate-cache.ts), why an agent has no live agreement when a revocation is the
 * cause, and whether an organization acts for a record. One statement each.
 */
import type { Pool, PoolClient } from "pg";
import type { AgentForVerify } from "./agents.js";
import { activeCandidatesSql, MAX_CANDIDATES, toActiveAgreementRow, type ActiveAgreementRow, type ActiveCandidateRow } from "./agreements-read.js";
import type { Queryable } from "./pool.js";

/** The burst window of denied attempts, seconds (the engine's DENIED_ATTEMPT_BURST, docs/evaluation.md). */
export const DENIAL_WINDOW_SECONDS = 60;

/**
 * Column of `verify_decisions` (migrations/0280_rules_in_one_place.sql) marking a stored
 * decision that DENIED_ATTEMPT_BURST does not count: a refusal of the spend transaction (a race
 * lost under the ledger lock against concurrent spends, which the agent could not see when it
 * was evaluated), or a DENY that did not try what the grant forbids. Never part of the answer.
 */
export const BURST_EXEMPT = "burst_exempt";

/** What a verify reads of an agent (`readAgentSnapshot`), kept by src/verify/gather/candidate-cache.ts. */
export interface AgentRead {
  /** The registered agent, or undefined. */
  agent?: AgentForVerify;
  /**
   * Ages (ms, database clock, oldest first) of the agent's DENY decisions within the last
   * `windowSeconds`, except the BURST_EXEMPT ones; empty without an agent.
   */
  denialAgesMs: number[];
  /**
   * The agent's live candidate agreements without records, as `loadActiveForAgent(…,
   * {records: false})` (ordered by id, at most MAX_CANDIDATES); empty without an agent.
   */
  candidates: ActiveAgreementRow[];
}

type StartRow = {
  g_agent_id: string;
  g_org_id: string;
  g_status: AgentForVerify["status"];
  g_public_key: AgentForVerify["public_key"];
  g_fingerprint: AgentForVerify["fingerprint"];
  denial_ages: number[];
} & { [K in keyof ActiveCandidateRow]: ActiveCandidateRow[K] | null };

/** The snapshot read of agent $1 (denial window $2 seconds, at most $3 candidates); exported for its plan test. */
export const AGENT_SNAPSHOT_SQL = `SELECT g.agent_id AS g_agent_id, g.org_id AS g_org_id, g.status AS g_status, g.public_key AS g_public_key, g.fingerprint AS g_fingerprint,
       ARRAY(SELECT (extract(epoch FROM now() - r.created_at) * 1000)::float8 FROM verify_decisions r
             WHERE r.agent_id = $1 AND r.created_at > now() - make_interval(secs => $2) AND r.decision->>'verdict' = 'DENY' AND NOT r.${BURST_EXEMPT}
             ORDER BY r.created_at) AS denial_ages,
       c.*
FROM agents g
LEFT JOIN LATERAL (${activeCandidatesSql({ records: false, agentExpr: "$1", limitExpr: "$3" })}) c ON true
WHERE g.agent_id = $1`;

/**
 * What a verify reads of agent `agentId`, in ONE statement (one round trip, one snapshot): the
 * agent, the ages of its recent denials (cheap on the (agent_id, created_at) index) and its
 * live candidate agreements without records (as `loadActiveForAgent`; one row per candidate,
 * the agent's columns repeated). The caller uses the candidates only once the agent is found
 * to be the caller's.
 */
export async function readAgentSnapshot(q: Pool | PoolClient, agentId: string, windowSeconds = DENIAL_WINDOW_SECONDS): Promise<AgentRead> {
  // Named: parsed and planned once per connection.
  const { rows } = await q.query<StartRow>({ name: "writ_verify_agent", text: AGENT_SNAPSHOT_SQL, values: [agentId, windowSeconds, MAX_CANDIDATES] });
  const r = rows[0];
  if (!r) return { denialAgesMs: [], candidates: [] };
  return {
    agent: { agent_id: r.g_agent_id, org_id: r.g_org_id, status: r.g_status, public_key: r.g_public_key, fingerprint: r.g_fingerprint },
    denialAgesMs: r.denial_ages.map(Number),
    candidates: rows.flatMap((c) => (c.agreement_id === null ? [] : [toActiveAgreementRow(c as ActiveCandidateRow)])),
  };
}

/** A revoked record that explains why an agent has no live agreement. */
export interface RevokedCause {
  agreementId: string;
  reason: "DELEGATION_REVOKED" | "AGREEMENT_REVOKED";
  delegationId: string | null;
}

/**
 * The agent's most recently changed agreement (of the tenant `orgId`, or without one; only
 * `agreementId` when given) that is revoked or whose delegation is revoked, or undefined.
 * A revoked delegation takes precedence over the agreement's own revocation.
 */
export async function revokedCause(q: Queryable, agentId: string, orgId: string, agreementId?: string): Promise<RevokedCause | undefined> {
  const { rows } = await q.query<{ agreement_id: string; delegation_id: string | null; delegation_revoked: boolean }>(
    `SELECT a.agreement_id, a.delegation_id, coalesce(d.revoked_at IS NOT NULL, false) AS delegation_revoked
     FROM agreements a LEFT JOIN delegations d ON d.agent_id = a.agent_id AND d.delegation_id = a.delegation_id
     WHERE a.agent_id = $1 AND (a.org_id IS NULL OR a.org_id = $2) AND ($3::text IS NULL OR a.agreement_id = $3)
       AND (d.revoked_at IS NOT NULL OR a.revoked_at IS NOT NULL OR EXISTS (SELECT 1 FROM revocations r WHERE r.agreement_id = a.agreement_id AND r.agent_id = a.agent_id))
     ORDER BY greatest(a.updated_at, coalesce(d.updated_at, a.updated_at)) DESC, a.agreement_id
     LIMIT 1`,
    [agentId, orgId, agreementId ?? null],
  );
  const r = rows[0];
  if (!r) return undefined;
  return { agreementId: r.agreement_id, reason: r.delegation_revoked ? "DELEGATION_REVOKED" : "AGREEMENT_REVOKED", delegationId: r.delegation_id };
}

/** True when organization `orgId` acts for a record of tenant `recordOrgId` whose agent it operates (`operatorOrgId`). */
export function ownsRecord(orgId: string, recordOrgId: string | null, operatorOrgId: string | null): boolean {
  return recordOrgId === orgId || (recordOrgId === null && operatorOrgId === orgId);
}
