/**
 * Reads the controller needs to write a resource's status (and the data plane's Kubernetes
 * watch to check tenancy): the tenancy and revocation columns of a stored agreement, which ids
 * of a chain are revoked, and the transparency log entry recording a body. Writes go through
 * the other store modules (the same functions as the API).
 */
import type { HashString } from "../core/canonical/index.js";
import type { Queryable } from "./pool.js";
import { HEAD_COLUMNS, HEAD_JOIN } from "./ledger/head.js";

/** The columns of a stored agreement the controller reports or checks. */
export interface AgreementRow {
  /** The agent whose row it is. */
  agentId: string;
  orgId: string | null;
  delegationId: string | null;
  revokedAt: Date | null;
  revokedReason: string | null;
  /** Who revoked it (`revoked_by`: `record`, `controller` for a deleted resource, ...). */
  revokedBy: string | null;
  /** A principal revocation was pushed for it (POST /v1/revocations/push). */
  pushedRevocation: boolean;
  ledgerSequence: number;
  ledgerHead: HashString | null;
}

/**
 * The stored agreement `id`'s columns: the one of organization `orgId` (null: without one) when
 * given (an id names an agreement within its organization), else the first under the id; or undefined.
 */
export async function agreementRow(q: Queryable, id: string, orgId?: string | null): Promise<AgreementRow | undefined> {
  const { rows } = await q.query<{
    agent_id: string;
    org_id: string | null;
    delegation_id: string | null;
    revoked_at: Date | null;
    revoked_reason: string | null;
    revoked_by: string | null;
    pushed: boolean;
    ledger_sequence: number;
    ledger_head: HashString | null;
  }>(
    `SELECT a.agent_id, a.org_id, a.delegation_id, a.revoked_at, a.revoked_reason, a.revoked_by, ${HEAD_COLUMNS},
            EXISTS (SELECT 1 FROM revocations r WHERE r.agreement_id = a.agreement_id AND r.agent_id = a.agent_id) AS pushed
     FROM agreements a ${HEAD_JOIN} WHERE a.agreement_id = $1 AND (NOT $2 OR a.org_id IS NOT DISTINCT FROM $3) ORDER BY a.agent_id LIMIT 1`,
    [id, orgId !== undefined, orgId ?? null],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    agentId: r.agent_id,
    orgId: r.org_id,
    delegationId: r.delegation_id,
    revokedAt: r.revoked_at,
    revokedReason: r.revoked_reason,
    revokedBy: r.revoked_by,
    pushedRevocation: r.pushed,
    ledgerSequence: r.ledger_sequence,
    ledgerHead: r.ledger_head,
  };
}

/** Which of `ids` are revoked delegations of organization `orgId` (null: without one; durable list `delegation_revocations`). */
export async function revokedDelegationIds(q: Queryable, orgId: string | null, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await q.query<{ delegation_id: string }>(
    "SELECT delegation_id FROM delegation_revocations WHERE org_id = $2 AND delegation_id = ANY($1::text[])",
    [ids, orgId ?? ""],
  );
  return new Set(rows.map((r) => r.delegation_id));
}

/**
 * The sequence of the first log entry of kind `agreement` whose body is exactly `canonicalBody`
 * (RFC 8785 text, as stored), or undefined. Without an index on the body this scans the
 * agreement entries; it runs only when the status does not already name the entry.
 */
export async function agreementLogSequence(q: Queryable, canonicalBody: string): Promise<number | undefined> {
  const { rows } = await q.query<{ sequence: string }>(
    "SELECT sequence::text AS sequence FROM log_entries WHERE kind = 'agreement' AND body = $1 ORDER BY sequence LIMIT 1",
    [canonicalBody],
  );
  return rows[0] ? Number(rows[0].sequence) : undefined;
}
