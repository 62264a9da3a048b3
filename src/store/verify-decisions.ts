/**
 * Idempotency of `POST /v1/verify` (table `verify_decisions`, migrations/0060_agreements.sql):
 * the decision given to (agent_id, action_id) and the hash of the request it answered.
 *
 * Promise: at most one decision per (agent, action); the first stored wins and later saves
 * return it. An ALLOW is stored by the spend transaction itself (src/verify/spend.ts, option
 * `decision`), so a recorded spend and its answer commit together; other verdicts are saved
 * with `saveVerifyDecision`. A retry with the same request hash gets the stored body; the same
 * action id with another request hash is a conflicting reuse the caller refuses.
 */
import type { HashString } from "../core/canonical/index.js";
import type { Queryable } from "./pool.js";

/** A stored decision. */
export interface StoredVerifyDecision {
  agentId: string;
  actionId: string;
  agreementId: string | null;
  requestHash: HashString;
  /** The response body as answered. */
  decision: Record<string, unknown>;
  createdAt: Date;
}

interface Row {
  agent_id: string;
  action_id: string;
  agreement_id: string | null;
  request_hash: HashString;
  decision: Record<string, unknown>;
  created_at: Date;
}

const COLUMNS = "agent_id, action_id, agreement_id, request_hash, decision, created_at";

function toStored(r: Row): StoredVerifyDecision {
  return { agentId: r.agent_id, actionId: r.action_id, agreementId: r.agreement_id, requestHash: r.request_hash, decision: r.decision, createdAt: r.created_at };
}

/** The decision stored for (agentId, actionId), or undefined. */
export async function findVerifyDecision(q: Queryable, agentId: string, actionId: string): Promise<StoredVerifyDecision | undefined> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM verify_decisions WHERE agent_id = $1 AND action_id = $2`, [agentId, actionId]);
  return rows[0] ? toStored(rows[0]) : undefined;
}

/** Stores a decision unless one exists; returns the stored one (`stored` false when another won). */
export async function saveVerifyDecision(
  q: Queryable,
  d: { agentId: string; actionId: string; agreementId: string | null; requestHash: HashString; decision: Record<string, unknown> },
): Promise<{ stored: boolean; decision: StoredVerifyDecision }> {
  const { rows } = await q.query<Row>(
    `INSERT INTO verify_decisions (agent_id, action_id, agreement_id, request_hash, decision) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (agent_id, action_id) DO NOTHING RETURNING ${COLUMNS}`,
    [d.agentId, d.actionId, d.agreementId, d.requestHash, JSON.stringify(d.decision)],
  );
  if (rows[0]) return { stored: true, decision: toStored(rows[0]) };
  // Another transaction stored it; a new statement (a new snapshot) sees its row.
  const other = await findVerifyDecision(q, d.agentId, d.actionId);
  if (!other) throw new Error("verify decision was neither stored nor found");
  return { stored: false, decision: other };
}
