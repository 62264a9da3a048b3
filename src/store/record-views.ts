/**
 * Reads of the read API (docs/records.md): a delegation or an agreement with who may see it
 * (its tenant, its agent's operator, its agent's registered principal), an agent's delegations,
 * and the spend under a delegation. One statement each.
 */
import type { AgreementRecord } from "./agreements.js";
import type { Delegation } from "../core/delegation/index.js";
import type { HashString } from "../core/canonical/index.js";
import type { Queryable } from "./pool.js";
import { spentIn } from "../core/money/index.js";
import { HEAD_COLUMNS, HEAD_JOIN } from "./ledger/head.js";
import { delegationSpendSql, spendPairs, type SpendPairs } from "./ledger/spend-sql.js";

/** Who a stored record belongs to. */
export interface RecordOwners {
  /** The tenant organization it is stored for (null: stored without one). */
  orgId: string | null;
  /** The organization that registered its agent (null: the agent is not registered). */
  operatorOrgId: string | null;
  /** The pseudonymous principal its agent is registered with. */
  principalId: string | null;
}

/** How a record was revoked, when it was. */
export interface RevocationFacts {
  at: string;
  reason: string | null;
  by: string | null;
}

/** A stored delegation for the read API. */
export interface DelegationView extends RecordOwners {
  delegationId: string;
  agentId: string;
  status: Delegation["status"];
  revocation: RevocationFacts | null;
  parentDelegationId: string | null;
  /** The record as declared, without its `intent_agreement`. */
  record: Delegation;
  /** Agreements bound to it. */
  agreementIds: string[];
}

/** A stored agreement for the read API. */
export interface AgreementView extends RecordOwners {
  agreementId: string;
  agentId: string;
  delegationId: string | null;
  status: string;
  revocation: RevocationFacts | null;
  /** A principal revocation of it was pushed (POST /v1/revocations/push). */
  pushedRevocation: boolean;
  ledgerSequence: number;
  ledgerHead: HashString | null;
  record: AgreementRecord;
}

const OWNERS = "g.org_id AS operator_org_id, g.principal_id";

function revocation(at: Date | null, reason: string | null, by: string | null): RevocationFacts | null {
  return at ? { at: at.toISOString(), reason, by } : null;
}

interface DelegationRow {
  delegation_id: string;
  org_id: string | null;
  agent_id: string;
  status: Delegation["status"];
  revoked_at: Date | null;
  revoked_reason: string | null;
  revoked_by: string | null;
  parent_delegation_id: string | null;
  record: Delegation;
  operator_org_id: string | null;
  principal_id: string | null;
  agreement_ids: string[] | null;
}

const DELEGATION_SQL = `SELECT d.delegation_id, d.org_id, d.agent_id, d.status, d.revoked_at, d.revoked_reason, d.revoked_by, d.parent_delegation_id, d.record, ${OWNERS},
  (SELECT array_agg(a.agreement_id ORDER BY a.agreement_id) FROM agreements a WHERE a.agent_id = d.agent_id AND a.delegation_id = d.delegation_id) AS agreement_ids
FROM delegations d LEFT JOIN agents g ON g.agent_id = d.agent_id`;

function toDelegation(r: DelegationRow): DelegationView {
  return {
    delegationId: r.delegation_id,
    orgId: r.org_id,
    agentId: r.agent_id,
    status: r.revoked_at ? "revoked" : r.status,
    revocation: revocation(r.revoked_at, r.revoked_reason, r.revoked_by),
    parentDelegationId: r.parent_delegation_id,
    record: r.record,
    operatorOrgId: r.operator_org_id,
    principalId: r.principal_id,
    agreementIds: r.agreement_ids ?? [],
  };
}

/** The stored delegation `id` with its owners (agent `agentId`'s when given), or undefined. */
export async function delegationView(q: Queryable, id: string, agentId?: string): Promise<DelegationView | undefined> {
  return (await delegationViews(q, id, agentId))[0];
}

/**
 * Every stored delegation `id` with its owners, one per agent holding the id (agent
 * `agentId`'s only, when given), ordered by agent: an id names a record only with its agent
 * (docs/scale.md, "Organization-scoped ids"); the caller keeps those its reader may see.
 */
export async function delegationViews(q: Queryable, id: string, agentId?: string): Promise<DelegationView[]> {
  const { rows } = await q.query<DelegationRow>(`${DELEGATION_SQL} WHERE d.delegation_id = $1 AND ($2::text IS NULL OR d.agent_id = $2) ORDER BY d.agent_id`, [
    id,
    agentId ?? null,
  ]);
  return rows.map(toDelegation);
}

/** The delegations of agent `agentId`, newest grant first, at most `limit`. */
export async function delegationsOfAgent(q: Queryable, agentId: string, limit: number): Promise<DelegationView[]> {
  const { rows } = await q.query<DelegationRow>(`${DELEGATION_SQL} WHERE d.agent_id = $1 ORDER BY d.record->>'granted_at' DESC, d.delegation_id LIMIT $2`, [
    agentId,
    limit,
  ]);
  return rows.map(toDelegation);
}

/** The stored agreement `id` with its owners (agent `agentId`'s when given), or undefined. */
export async function agreementView(q: Queryable, id: string, agentId?: string): Promise<AgreementView | undefined> {
  return (await agreementViews(q, id, agentId))[0];
}

/**
 * Every stored agreement `id` with its owners, one per agent holding the id (agent `agentId`'s
 * only, when given), ordered by agent (see `delegationViews`).
 */
export async function agreementViews(q: Queryable, id: string, agentId?: string): Promise<AgreementView[]> {
  const { rows } = await q.query<{
    agreement_id: string;
    org_id: string | null;
    agent_id: string;
    delegation_id: string | null;
    status: string;
    revoked_at: Date | null;
    revoked_reason: string | null;
    revoked_by: string | null;
    pushed: boolean;
    ledger_sequence: number;
    ledger_head: HashString | null;
    record: AgreementRecord;
    operator_org_id: string | null;
    principal_id: string | null;
    d_revoked_at: Date | null;
    d_revoked_reason: string | null;
    d_revoked_by: string | null;
  }>(
    `SELECT a.agreement_id, a.org_id, a.agent_id, a.delegation_id, a.status, a.revoked_at, a.revoked_reason, a.revoked_by, ${HEAD_COLUMNS}, a.record,
            EXISTS (SELECT 1 FROM revocations r WHERE r.agreement_id = a.agreement_id AND r.agent_id = a.agent_id) AS pushed, ${OWNERS},
            d.revoked_at AS d_revoked_at, d.revoked_reason AS d_revoked_reason, d.revoked_by AS d_revoked_by
     FROM agreements a ${HEAD_JOIN} LEFT JOIN agents g ON g.agent_id = a.agent_id LEFT JOIN delegations d ON d.agent_id = a.agent_id AND d.delegation_id = a.delegation_id
     WHERE a.agreement_id = $1 AND ($2::text IS NULL OR a.agent_id = $2) ORDER BY a.agent_id`,
    [id, agentId ?? null],
  );
  return rows.map((r) => ({
    // Revoked through its delegation too: that is what verify enforces (DELEGATION_REVOKED).
    agreementId: r.agreement_id,
    orgId: r.org_id,
    agentId: r.agent_id,
    delegationId: r.delegation_id,
    status: r.revoked_at || r.pushed || r.d_revoked_at ? "revoked" : r.status,
    revocation:
      revocation(r.revoked_at, r.revoked_reason, r.revoked_by) ??
      revocation(r.d_revoked_at, r.d_revoked_at ? `delegation ${r.delegation_id ?? ""} is revoked: ${r.d_revoked_reason ?? ""}` : null, r.d_revoked_by),
    pushedRevocation: r.pushed,
    ledgerSequence: r.ledger_sequence,
    ledgerHead: r.ledger_head,
    record: r.record,
    operatorOrgId: r.operator_org_id,
    principalId: r.principal_id,
  }));
}

/** An agent as its principal sees it in the portal (never its operator's org id or key). */
export interface PrincipalAgent {
  agent_id: string;
  status: string;
  verification_level: string;
  fingerprint: HashString;
  registered_at: string;
}

/** The agents registered with principal `principalId`, oldest registration first, at most `limit`. */
export async function agentsOfPrincipal(q: Queryable, principalId: string, limit: number): Promise<PrincipalAgent[]> {
  const { rows } = await q.query<Omit<PrincipalAgent, "registered_at"> & { registered_at: Date }>(
    `SELECT agent_id, status, verification_level, fingerprint, registered_at FROM agents
     WHERE principal_id = $1 ORDER BY registered_at, agent_id LIMIT $2`,
    [principalId, limit],
  );
  return rows.map((r) => ({ ...r, registered_at: r.registered_at.toISOString() }));
}

/** The delegations of every agent registered with principal `principalId`, newest grant first, at most `limit`. */
export async function delegationsOfPrincipal(q: Queryable, principalId: string, limit: number): Promise<DelegationView[]> {
  const { rows } = await q.query<DelegationRow>(`${DELEGATION_SQL} WHERE g.principal_id = $1 ORDER BY d.record->>'granted_at' DESC, d.delegation_id LIMIT $2`, [
    principalId,
    limit,
  ]);
  return rows.map(toDelegation);
}

/**
 * Agreements (agent and id, their key) whose agent is registered with principal `principalId`
 * (the portal's list), newest first, at most `limit`.
 */
export async function agreementIdsOfPrincipal(q: Queryable, principalId: string, limit: number): Promise<{ agentId: string; agreementId: string }[]> {
  const { rows } = await q.query<{ agent_id: string; agreement_id: string }>(
    `SELECT a.agent_id, a.agreement_id FROM agreements a JOIN agents g ON g.agent_id = a.agent_id ${HEAD_JOIN}
     WHERE g.principal_id = $1 ORDER BY greatest(a.updated_at, h.updated_at) DESC, a.agreement_id, a.agent_id LIMIT $2`,
    [principalId, limit],
  );
  return rows.map((r) => ({ agentId: r.agent_id, agreementId: r.agreement_id }));
}

/**
 * Spent under delegation `delegationId` of agent `agentId` across all its agreements, in minor units of
 * `currency` (its scope's); undefined when some of it is in another currency (the spend
 * transaction's rule: it cannot be added without a rate).
 */
export async function delegationSpent(q: Queryable, agentId: string, delegationId: string, currency: string): Promise<bigint | undefined> {
  const { rows } = await q.query<{ spend: SpendPairs }>(`SELECT ${delegationSpendSql("$1", "$2")} AS spend`, [agentId, delegationId]);
  return spentIn(spendPairs(rows[0]?.spend), currency);
}
