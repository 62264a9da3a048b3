/**
 * Revocations made by the data plane (docs/verify.md, "Revocation"): by the principal (a
 * signed revocation), by policy acting for the principal (an organization key, or the
 * service's own REVOKE decision), or by the service operator (the admin token).
 *
 * Promise of `revokeDelegationLogged` / `revokeAgreementLogged`, inside the caller's
 * transaction: the record (and, for a delegation, everything below it in any chain) is
 * revoked and announced with NOTIFY; when anything was newly revoked, ONE transparency log
 * entry of kind `revocation` with body `{delegation_id | agreement_id, ids, reason, by, at}` is
 * appended (when a log signer is given) and ONE `revocation` alert per affected agent is
 * enqueued for its subscribers. All of it commits or none of it. A repeat revokes nothing,
 * logs nothing and alerts nobody. Bound agreements are invalidated through their delegation
 * (verify answers DELEGATION_REVOKED), not rewritten: revoking an agreement record is the
 * principal's signed act.
 */
import type { Pool, PoolClient } from "pg";
import type { Signer } from "../core/jose/index.js";
import type { HashString } from "../core/canonical/index.js";
import { revokeAgreement } from "../store/agreements.js";
import { revokeDelegation } from "../store/delegations.js";
import { appendLogEntries, type LogAppendOptions } from "../store/log.js";
import { withTransaction } from "../store/pool.js";
import { alertSubscribers, newEventId } from "../store/subscriptions.js";
import { saveVerifyDecision, type StoredVerifyDecision } from "../store/verify-decisions.js";
import type { VerifyCandidate } from "./candidates.js";

/** Who revokes. */
export type RevokedBy = "principal" | "policy" | "service";

/** A revocation to make and log. */
export interface LoggedRevocation {
  id: string;
  reason: string;
  by: RevokedBy;
  at: Date;
  /** Signs the log entry; null: the revocation is made and alerted but not logged. */
  signer: Signer | null;
  logOptions?: LogAppendOptions;
}

/** What a logged revocation did. */
export interface LoggedRevocationResult {
  /** Ids newly revoked (empty for a repeat). */
  ids: string[];
  /** False for an id the store does not know. */
  found: boolean;
  /** Agreements bound to the revoked delegations (invalidated with them). */
  agreementIds: string[];
  /** Sequence of the log entry, when one was appended. */
  logSequence: number | null;
}

async function logAndAlert(client: PoolClient, body: Record<string, unknown>, agents: readonly string[], r: LoggedRevocation): Promise<number | null> {
  let sequence: number | null = null;
  if (r.signer) {
    const out = await appendLogEntries(client, [{ kind: "revocation", body }], r.signer, r.logOptions ?? { now: r.at });
    sequence = out.entries[0]?.sequence ?? null;
  }
  const { at: _at, ...details } = body;
  for (const agentId of agents) {
    await alertSubscribers(client, agentId, { event_id: newEventId(), type: "revocation", agent_id: agentId, at: r.at.toISOString(), details });
  }
  return sequence;
}

/** Revokes delegation `r.id` and everything below it, logs and alerts (see the module comment). */
export async function revokeDelegationLogged(client: PoolClient, r: LoggedRevocation): Promise<LoggedRevocationResult> {
  const res = await revokeDelegation(client, r.id, { reason: r.reason, by: r.by, at: r.at });
  if (res.ids.length === 0) return { ids: [], found: res.found, agreementIds: [], logSequence: null };
  const affected = await client.query<{ agents: string[] | null; agreements: string[] | null }>(
    `SELECT (SELECT array_agg(DISTINCT agent_id ORDER BY agent_id) FROM delegations WHERE delegation_id = ANY($1::text[])) AS agents,
            (SELECT array_agg(agreement_id ORDER BY agreement_id) FROM agreements WHERE delegation_id = ANY($1::text[])) AS agreements`,
    [res.ids],
  );
  const agents = affected.rows[0]?.agents ?? [];
  const agreementIds = affected.rows[0]?.agreements ?? [];
  const body = { delegation_id: r.id, ids: res.ids, reason: r.reason, by: r.by, at: r.at.toISOString() };
  const logSequence = await logAndAlert(client, body, agents, r);
  return { ids: res.ids, found: res.found, agreementIds, logSequence };
}

/** Revokes agreement `r.id` of agent `agentId`, logs and alerts (see the module comment). */
export async function revokeAgreementLogged(client: PoolClient, agentId: string, r: LoggedRevocation): Promise<LoggedRevocationResult> {
  const res = await revokeAgreement(client, r.id, { reason: r.reason, by: r.by, at: r.at });
  if (res.ids.length === 0) return { ids: [], found: res.found, agreementIds: [], logSequence: null };
  const body = { agreement_id: r.id, ids: res.ids, reason: r.reason, by: r.by, at: r.at.toISOString() };
  const logSequence = await logAndAlert(client, body, [agentId], r);
  return { ids: res.ids, found: res.found, agreementIds: res.ids, logSequence };
}

/** The service's REVOKE decision to carry out. */
export interface PolicyRevoke {
  agentId: string;
  candidate: VerifyCandidate;
  reason: string;
  at: Date;
  signer: Signer | null;
  logOptions?: LogAppendOptions;
  /** The verify answer to store (last, in the same transaction). */
  decision: { actionId: string; requestHash: HashString; body: Record<string, unknown> };
}

/**
 * Carries out a REVOKE decision in ONE transaction: revokes the candidate's delegation as
 * policy acting for the principal (or, for an agreement without a delegation, the agreement
 * itself), logs, alerts, and stores the verify answer. A delegation with `revocable: false` is
 * not revoked (the spec conditions every revocation on it); the action is still refused.
 */
export async function revokeByPolicy(pool: Pool, p: PolicyRevoke): Promise<{ revocation: LoggedRevocationResult | null; saved: { stored: boolean; decision: StoredVerifyDecision } }> {
  return withTransaction(pool, async (client) => {
    const d = p.candidate.delegation?.delegation;
    const acts = { reason: p.reason, by: "policy" as const, at: p.at, signer: p.signer, ...(p.logOptions ? { logOptions: p.logOptions } : {}) };
    let revocation: LoggedRevocationResult | null = null;
    if (d) {
      if (d.revocable !== false) revocation = await revokeDelegationLogged(client, { id: d.delegation_id, ...acts });
    } else {
      revocation = await revokeAgreementLogged(client, p.agentId, { id: p.candidate.agreementId, ...acts });
    }
    // Stored last: the decision row is the only lock this shares with a concurrent spend of the same action.
    const saved = await saveVerifyDecision(client, {
      agentId: p.agentId,
      actionId: p.decision.actionId,
      agreementId: p.candidate.agreementId,
      requestHash: p.decision.requestHash,
      decision: p.decision.body,
    });
    return { revocation, saved };
  });
}
