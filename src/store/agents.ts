/**
 * Registered agents (table `agents`, migrations/0030_registry.sql) and their transparency log
 * entry.
 *
 * Promises: an agent id is registered at most once, and an agent key (by fingerprint) is held by
 * at most one agent that is not displaced; `insertAgent` reports which one collided instead of
 * failing the caller's transaction. A registration whose key is PROVEN (a verified proof of
 * possession, src/core/registry/key-proof.ts) displaces the live UNPROVEN holder of the same key
 * (a squat, whichever organization made it): that agent is kept but suspended for good
 * (`displaced_at`, `displaced_by` the new agent id; `setAgentStatus` never makes it active
 * again), in the same transaction. A proven holder is never displaced (409). The registration
 * log entry never carries the principal_id.
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
  /** The registration proved possession of the key. */
  key_proven: boolean;
  /** Set when a proven registration of the same key displaced this one (then suspended for good). */
  displaced_at: Date | null;
  /** The agent id whose proven registration displaced this one. */
  displaced_by: string | null;
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
  /** The caller verified a proof of possession of `public_key` (default false). */
  key_proven?: boolean;
}

/** The outcome of `insertAgent`; `displaced` is the agent id a proven registration displaced. */
export type InsertAgentOutcome = { ok: true; agent: AgentRecord; displaced?: string } | { ok: false; conflict: "agent_id" | "public_key" };

const COLUMNS =
  "agent_id, org_id, principal_id, verification_level, status, public_key, fingerprint, key_proven, displaced_at, displaced_by, registered_at, updated_at";

/**
 * Displaces the live unproven holder of `input`'s key for the proven registration of
 * `input.agent_id` (see the module comment); the displaced agent id, or undefined when there
 * is none (or the agent id itself is taken, which displaces nothing).
 */
async function displaceSquat(q: Queryable, input: AgentInput, now: Date): Promise<string | undefined> {
  if ((await q.query("SELECT 1 FROM agents WHERE agent_id = $1", [input.agent_id])).rows.length > 0) return undefined;
  const { rows } = await q.query<{ agent_id: string }>(
    `UPDATE agents SET status = 'suspended', displaced_at = $2, displaced_by = $3, updated_at = $2
     WHERE fingerprint = $1 AND displaced_at IS NULL AND NOT key_proven
     RETURNING agent_id`,
    [input.fingerprint, now, input.agent_id],
  );
  return rows[0]?.agent_id;
}

/**
 * Stores a new active agent registered at `now`, or reports the conflict (an existing agent
 * id wins over an existing key when both collide). With `key_proven`, the live unproven holder
 * of the key is displaced first (see the module comment). Nothing is written on a conflict.
 */
export async function insertAgent(q: Queryable, input: AgentInput, now: Date): Promise<InsertAgentOutcome> {
  const proven = input.key_proven === true;
  const displaced = proven ? await displaceSquat(q, input, now) : undefined;
  const { rows } = await q.query<AgentRecord>(
    `INSERT INTO agents (agent_id, org_id, principal_id, verification_level, status, public_key, fingerprint, key_proven, registered_at, updated_at)
     VALUES ($1, $2, $3, $4, 'active', $5, $6, $7, $8, $8) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
    [input.agent_id, input.org_id, input.principal_id, input.verification_level, JSON.stringify(input.public_key), input.fingerprint, proven, now],
  );
  if (rows[0]) return displaced !== undefined ? { ok: true, agent: rows[0], displaced } : { ok: true, agent: rows[0] };
  const taken = await q.query<{ same_id: boolean }>(
    "SELECT agent_id = $1 AS same_id FROM agents WHERE agent_id = $1 OR (fingerprint = $2 AND displaced_at IS NULL) ORDER BY 1 DESC LIMIT 1",
    [input.agent_id, input.fingerprint],
  );
  return { ok: false, conflict: taken.rows[0]?.same_id === false ? "public_key" : "agent_id" };
}

/** The agent `agentId`, or undefined; with `forUpdate`, its row is locked for the transaction. */
export async function getAgent(q: Queryable, agentId: string, opts: { forUpdate?: boolean } = {}): Promise<AgentRecord | undefined> {
  const { rows } = await q.query<AgentRecord>(`SELECT ${COLUMNS} FROM agents WHERE agent_id = $1${opts.forUpdate ? " FOR UPDATE" : ""}`, [agentId]);
  return rows[0];
}

/**
 * Sets the status of `agentId` at `now`; undefined when there is no such agent. A displaced
 * agent is never made active again (it keeps its status).
 */
export async function setAgentStatus(q: Queryable, agentId: string, status: AgentStatus, now: Date): Promise<AgentRecord | undefined> {
  const { rows } = await q.query<AgentRecord>(
    `UPDATE agents SET status = CASE WHEN displaced_at IS NOT NULL AND $2 = 'active' THEN status ELSE $2 END,
       updated_at = CASE WHEN status = $2 OR (displaced_at IS NOT NULL AND $2 = 'active') THEN updated_at ELSE $3 END
     WHERE agent_id = $1 RETURNING ${COLUMNS}`,
    [agentId, status, now],
  );
  return rows[0];
}

/** What the verify path needs of agent `agentId`, or undefined when it is not registered. */
export async function getAgentForVerify(q: Queryable, agentId: string): Promise<AgentForVerify | undefined> {
  const { rows } = await q.query<AgentForVerify>("SELECT agent_id, org_id, status, public_key, fingerprint FROM agents WHERE agent_id = $1", [agentId]);
  return rows[0];
}

/**
 * The transparency log entry of a registration: kind `registration`, body `{agent_id,
 * fingerprint, verification_level, org_id, at}`, plus `key_proven: true` for a proven key
 * (never the principal_id).
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
      ...(agent.key_proven ? { key_proven: true } : {}),
    },
  };
}
