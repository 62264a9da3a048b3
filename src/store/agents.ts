/**
 * Registered agents (table `agents`, migrations/0030_registry.sql) and their transparency log
 * entry.
 *
 * Promise: an agent id and an agent key (by fingerprint) are each registered at most once;
 * `insertAgent` reports which one collided instead of failing the caller's transaction. The
 * registration log entry never carries the principal_id.
 */
import type { HashString } from "../core/canonical/index.js";
import type { PublicJwk } from "../core/jose/index.js";
import type { AgentStatus, VerificationLevel } from "../core/registry/index.js";
import type { LogAppendInput } from "./log.js";
import type { Queryable } from "./pool.js";

/** A stored agent. */
export interface AgentRecord {
  agent_id: string;
  /** The operator organization that registered it. */
  org_id: string;
  /** Pseudonymous principal id; shown only to the owning organization. */
  principal_id: string;
  verification_level: VerificationLevel;
  status: AgentStatus;
  public_key: PublicJwk;
  fingerprint: HashString;
  registered_at: Date;
  updated_at: Date;
}

/** What the verify path needs of an agent. */
export interface AgentForVerify {
  agent_id: string;
  org_id: string;
  status: AgentStatus;
  public_key: PublicJwk;
  fingerprint: HashString;
}

/** A registration to store. */
export interface AgentInput {
  agent_id: string;
  org_id: string;
  principal_id: string;
  verification_level: VerificationLevel;
  public_key: PublicJwk;
  fingerprint: HashString;
}

/** The outcome of `insertAgent`. */
export type InsertAgentOutcome = { ok: true; agent: AgentRecord } | { ok: false; conflict: "agent_id" | "public_key" };

const COLUMNS = "agent_id, org_id, principal_id, verification_level, status, public_key, fingerprint, registered_at, updated_at";

/**
 * Stores a new active agent registered at `now`, or reports the conflict (an existing agent
 * id wins over an existing key when both collide). Nothing is written on a conflict.
 */
export async function insertAgent(q: Queryable, input: AgentInput, now: Date): Promise<InsertAgentOutcome> {
  const { rows } = await q.query<AgentRecord>(
    `INSERT INTO agents (agent_id, org_id, principal_id, verification_level, status, public_key, fingerprint, registered_at, updated_at)
     VALUES ($1, $2, $3, $4, 'active', $5, $6, $7, $7) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
    [input.agent_id, input.org_id, input.principal_id, input.verification_level, JSON.stringify(input.public_key), input.fingerprint, now],
  );
  if (rows[0]) return { ok: true, agent: rows[0] };
  const taken = await q.query<{ same_id: boolean }>(
    "SELECT agent_id = $1 AS same_id FROM agents WHERE agent_id = $1 OR fingerprint = $2 ORDER BY 1 DESC LIMIT 1",
    [input.agent_id, input.fingerprint],
  );
  return { ok: false, conflict: taken.rows[0]?.same_id === false ? "public_key" : "agent_id" };
}

/** The agent `agentId`, or undefined; with `forUpdate`, its row is locked for the transaction. */
export async function getAgent(q: Queryable, agentId: string, opts: { forUpdate?: boolean } = {}): Promise<AgentRecord | undefined> {
  const { rows } = await q.query<AgentRecord>(
    `SELECT ${COLUMNS} FROM agents WHERE agent_id = $1${opts.forUpdate ? " FOR UPDATE" : ""}`,
    [agentId],
  );
  return rows[0];
}

/** Sets the status of `agentId` at `now`; undefined when there is no such agent. */
export async function setAgentStatus(q: Queryable, agentId: string, status: AgentStatus, now: Date): Promise<AgentRecord | undefined> {
  const { rows } = await q.query<AgentRecord>(
    `UPDATE agents SET status = $2, updated_at = CASE WHEN status = $2 THEN updated_at ELSE $3 END WHERE agent_id = $1 RETURNING ${COLUMNS}`,
    [agentId, status, now],
  );
  return rows[0];
}

/** What the verify path needs of agent `agentId`, or undefined when it is not registered. */
export async function getAgentForVerify(q: Queryable, agentId: string): Promise<AgentForVerify | undefined> {
  const { rows } = await q.query<AgentForVerify>(
    "SELECT agent_id, org_id, status, public_key, fingerprint FROM agents WHERE agent_id = $1",
    [agentId],
  );
  return rows[0];
}

/**
 * The transparency log entry of a registration: kind `registration`, body `{agent_id,
 * fingerprint, verification_level, org_id, at}` (never the principal_id).
 */
export function registrationLogEntry(agent: AgentRecord): LogAppendInput {
  return {
    kind: "registration",
    body: {
      agent_id: agent.agent_id,
      fingerprint: agent.fingerprint,
      verification_level: agent.verification_level,
      org_id: agent.org_id,
      at: agent.registered_at.toISOString(),
    },
  };
}
