/**
 * Reads of stored agreements for the verify path, the registry and tests.
 *
 * Promises: `loadActiveForAgent` answers in ONE statement (one snapshot) with each live
 * candidate's revision, ledger state and spend totals, and, when asked, the records; a
 * candidate is an agreement of the agent that is active or accepted and not revoked, whose
 * delegation (when it has one) is not revoked. `loadAgreementWithLedger` re-assembles the full
 * IntentAgreement in one statement; since the database is the system of record, its
 * `ledger_as_of` is the time of the read.
 */
import { mandateHash as hashOfMandate, type AgreementStatus, type IntentAgreement, type LedgerEntry } from "../core/agreement/index.js";
import type { HashString } from "../core/canonical/index.js";
import type { Delegation } from "../core/delegation/index.js";
import type { AgreementRecord } from "./agreements.js";
import type { PoolClient } from "pg";
import type { Queryable } from "./pool.js";
import { spentIn } from "../core/money/index.js";
import { HEAD_COLUMNS, HEAD_JOIN } from "./ledger/head.js";
import { delegationSpendSql, spendPairs, type SpendPairs } from "./ledger/spend-sql.js";

/** Most candidates `loadActiveForAgent` returns by default. */
export const MAX_CANDIDATES = 50;

/** The delegation side of a candidate. */
export interface CandidateDelegation {
  delegationId: string;
  generation: number;
  /** The delegation row's organization (null: none). */
  orgId: string | null;
  /** Present when records were asked for. */
  record?: Delegation;
  /** Scope currency of the delegation. */
  currency: string | null;
  /**
   * Spent under the delegation across all its agreements, in minor units of its scope
   * currency; undefined when some of that spend is in another currency (it cannot be added
   * without a rate).
   */
  spentMinor: bigint | undefined;
}

/** One candidate agreement for a verify. */
export interface ActiveAgreementRow {
  agreementId: string;
  revision: number;
  status: AgreementStatus;
  agentId: string;
  orgId: string | null;
  ledgerSequence: number;
  ledgerHead: HashString | undefined;
  /** Spent per intent, minor units of each intent's currency. */
  spent: Map<string, bigint>;
  /** Present when records were asked for. */
  record?: AgreementRecord;
  delegation?: CandidateDelegation;
  /**
   * Set when the row holds the ledger of a recorded mandate (`agreements.evidence`): the
   * delegation is the evidence, and the action is evaluated against it alone.
   */
  evidence?: AgreementEvidence;
}

/** What an agreement row written by the service stands for (migrations/0130_mandates.sql). */
export type AgreementEvidence = "ap2_open_payment_mandate";

/** A candidate row as the candidate SQL returns it (`activeCandidatesSql`, `toActiveAgreementRow`). */
export interface ActiveCandidateRow {
  agreement_id: string;
  revision: string;
  status: AgreementStatus;
  agent_id: string;
  org_id: string | null;
  ledger_sequence: number;
  ledger_head: HashString | null;
  spent: Record<string, string>;
  record?: AgreementRecord;
  delegation_id: string | null;
  generation: string | null;
  delegation_org_id: string | null;
  delegation_record?: Delegation | null;
  delegation_currency: string | null;
  delegation_spend: SpendPairs | null;
  evidence: AgreementEvidence | null;
}

/**
 * The candidate SELECT (see the module comment) of the agent `agentExpr` (an SQL expression:
 * a parameter such as `$1`, or a column of an outer query when used in a LATERAL join), at
 * most `limitExpr` rows, ordered by agreement id. Its columns are those of
 * `ActiveCandidateRow`; map them with `toActiveAgreementRow`.
 */
export function activeCandidatesSql(opts: { records: boolean; agentExpr: string; limitExpr: string }): string {
  const records = opts.records;
  return `SELECT a.agreement_id, a.revision::text AS revision, a.status, a.agent_id, a.org_id, ${HEAD_COLUMNS}, a.evidence,
      ${records ? "a.record, d.record AS delegation_record," : ""}
      (SELECT coalesce(jsonb_object_agg(s.intent_id, s.spent_minor::text), '{}') FROM agreement_spend s WHERE s.agent_id = a.agent_id AND s.agent_id = ${opts.agentExpr} AND s.agreement_id = a.agreement_id) AS spent,
      d.delegation_id, d.generation::text AS generation, d.org_id AS delegation_org_id, d.record->'scope'->>'currency' AS delegation_currency,
      CASE WHEN d.delegation_id IS NOT NULL THEN ${delegationSpendSql(opts.agentExpr, "d.delegation_id")} END AS delegation_spend
    FROM agreements a
    -- The outer joins name the agent itself (it is a's): a value is not carried to the nullable
    -- side of an outer join, and Citus routes a statement to one worker only when every
    -- per-agent table in it names the agent (docs/scale.md).
    LEFT JOIN agreement_ledger_heads h ON h.agent_id = a.agent_id AND h.agent_id = ${opts.agentExpr} AND h.agreement_id = a.agreement_id
    LEFT JOIN delegations d ON d.agent_id = a.agent_id AND d.agent_id = ${opts.agentExpr} AND d.delegation_id = a.delegation_id
    WHERE a.agent_id = ${opts.agentExpr} AND a.revoked_at IS NULL AND a.status IN ('active', 'accepted')
      AND (d.delegation_id IS NULL OR d.revoked_at IS NULL)
    ORDER BY a.agreement_id
    LIMIT ${opts.limitExpr}`;
}

/** Clamps a requested candidate limit to 1..1000 (default MAX_CANDIDATES). */
export function candidateLimit(limit: number | undefined): number {
  return Math.max(1, Math.min(1000, Math.floor(limit ?? MAX_CANDIDATES)));
}

/** One row of `activeCandidatesSql` as a candidate. */
export function toActiveAgreementRow(r: ActiveCandidateRow): ActiveAgreementRow {
  const out: ActiveAgreementRow = {
    agreementId: r.agreement_id,
    revision: Number(r.revision),
    status: r.status,
    agentId: r.agent_id,
    orgId: r.org_id,
    ledgerSequence: r.ledger_sequence,
    ledgerHead: r.ledger_head ?? undefined,
    spent: new Map(Object.entries(r.spent).map(([k, v]) => [k, BigInt(v)])),
  };
  if (r.record !== undefined) out.record = r.record;
  if (r.evidence !== null) out.evidence = r.evidence;
  if (r.delegation_id !== null) {
    const d: CandidateDelegation = {
      delegationId: r.delegation_id,
      generation: Number(r.generation),
      orgId: r.delegation_org_id,
      currency: r.delegation_currency,
      spentMinor: spentIn(spendPairs(r.delegation_spend), r.delegation_currency),
    };
    if (r.delegation_record) d.record = r.delegation_record;
    out.delegation = d;
  }
  return out;
}

/**
 * The live candidate agreements of `agentId` (see the module comment), ordered by id, at most
 * `limit` (default MAX_CANDIDATES). With `records: false` the (large) records are left out:
 * the verify path then fetches only those its cache misses.
 */
export async function loadActiveForAgent(q: Queryable, agentId: string, opts: { records?: boolean; limit?: number } = {}): Promise<ActiveAgreementRow[]> {
  const sql = activeCandidatesSql({ records: opts.records ?? true, agentExpr: "$1", limitExpr: "$2" });
  const { rows } = await q.query<ActiveCandidateRow>(sql, [agentId, candidateLimit(opts.limit)]);
  return rows.map(toActiveAgreementRow);
}

/**
 * Records (and revisions) of the agreements `ids` that are stored: agent `agentId`'s (by the
 * rows' key) when given, else every agent's holding one of the ids (`agentId` says whose).
 */
export async function loadAgreementRecords(
  q: Queryable,
  ids: readonly string[],
  agentId?: string,
): Promise<{ agreementId: string; agentId: string; orgId: string | null; revision: number; record: AgreementRecord }[]> {
  if (ids.length === 0) return [];
  const cols = "agreement_id, agent_id, org_id, revision::text AS revision, record";
  const { rows } = await q.query<{ agreement_id: string; agent_id: string; org_id: string | null; revision: string; record: AgreementRecord }>(
    agentId === undefined
      ? `SELECT ${cols} FROM agreements WHERE agreement_id = ANY($1::text[]) ORDER BY agreement_id, agent_id`
      : `SELECT ${cols} FROM agreements WHERE agent_id = $2 AND agreement_id = ANY($1::text[])`,
    agentId === undefined ? [ids] : [ids, agentId],
  );
  return rows.map((r) => ({ agreementId: r.agreement_id, agentId: r.agent_id, orgId: r.org_id, revision: Number(r.revision), record: r.record }));
}

/**
 * The full agreement `id` (of agent `opts.agentId` when given, else the first by agent) with its
 * ledger re-assembled from `ledger_entries`, or undefined. `ledger_as_of` is `opts.asOf` or the
 * database's time of the read.
 */
export async function loadAgreementWithLedger(q: Queryable, id: string, opts: { asOf?: string; agentId?: string } = {}): Promise<IntentAgreement | undefined> {
  const { rows } = await q.query<{ record: AgreementRecord; ledger_sequence: number; ledger_head: HashString | null; ledger: LedgerEntry[]; read_at: Date }>(
    `SELECT a.record, ${HEAD_COLUMNS}, statement_timestamp() AS read_at,
       (SELECT coalesce(jsonb_agg(e.entry ORDER BY e.sequence), '[]') FROM ledger_entries e WHERE e.agent_id = a.agent_id AND e.agreement_id = a.agreement_id) AS ledger
     FROM agreements a ${HEAD_JOIN} WHERE a.agreement_id = $1 AND ($2::text IS NULL OR a.agent_id = $2) ORDER BY a.agent_id LIMIT 1`,
    [id, opts.agentId ?? null],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    ...r.record,
    ledger: r.ledger,
    ledger_sequence: r.ledger_sequence,
    ...(r.ledger_head !== null ? { ledger_head: r.ledger_head } : {}),
    ledger_as_of: opts.asOf ?? r.read_at.toISOString(),
  };
}

/**
 * The stored agreement `id` that a principal revocation of mandate hash `mandateHash` names,
 * its row locked FOR SHARE until the caller's transaction ends, or undefined when no agent
 * holds the id. An id names agreements of several organizations (docs/scale.md,
 * "Organization-scoped ids"): the one holding a mandate of that hash is the one named; when
 * none does, the first by agent (the revocation then does not verify against it).
 */
export async function lockAgreementByMandate(
  client: PoolClient,
  id: string,
  mandateHash: string,
): Promise<{ record: AgreementRecord; agentId: string; orgId: string | null } | undefined> {
  // The agents holding the id first, then each row locked by its key, in agent order: a Citus
  // cluster refuses FOR SHARE on a statement over every shard (docs/scale.md).
  const holders = await client.query<{ agent_id: string }>("SELECT agent_id FROM agreements WHERE agreement_id = $1 ORDER BY agent_id", [id]);
  const rows: { record: AgreementRecord; agent_id: string; org_id: string | null }[] = [];
  for (const h of holders.rows) {
    const locked = await client.query<{ record: AgreementRecord; agent_id: string; org_id: string | null }>(
      "SELECT record, agent_id, org_id FROM agreements WHERE agent_id = $1 AND agreement_id = $2 FOR SHARE",
      [h.agent_id, id],
    );
    rows.push(...locked.rows);
  }
  const named = rows.length > 1 ? rows.find((r) => r.record.mandates.some((m) => hashOfMandate(m) === mandateHash)) : undefined;
  const r = named ?? rows[0];
  return r ? { record: r.record, agentId: r.agent_id, orgId: r.org_id } : undefined;
}

/** Most agreements `agreementsAcknowledgedBy` returns. */
export const MAX_ACKNOWLEDGED = 20;

/**
 * Up to MAX_ACKNOWLEDGED stored records of agent `agentId`'s agreements (any status) holding an
 * acknowledgement whose `id` is `partyId`; the caller verifies those acknowledgements
 * (`paymentParties`, src/store/ack-keys.ts).
 */
export async function agreementsAcknowledgedBy(q: Queryable, agentId: string, partyId: string): Promise<AgreementRecord[]> {
  const { rows } = await q.query<{ record: AgreementRecord }>(
    `SELECT record FROM agreements WHERE agent_id = $1 AND record->'acknowledgements' @> jsonb_build_array(jsonb_build_object('id', $2::text))
     ORDER BY agreement_id LIMIT ${MAX_ACKNOWLEDGED}`,
    [agentId, partyId],
  );
  return rows.map((r) => r.record);
}

/** Every revoked agreement id with its organization ('' for none): revoked here, or named by a pushed principal revocation. */
export async function listRevokedAgreementIds(q: Queryable): Promise<{ org: string; id: string }[]> {
  const { rows } = await q.query<{ org_id: string; agreement_id: string }>(
    `SELECT coalesce(org_id, '') AS org_id, agreement_id FROM agreements WHERE revoked_at IS NOT NULL
     UNION SELECT coalesce(org_id, ''), agreement_id FROM revocations`,
  );
  return rows.map((r) => ({ org: r.org_id, id: r.agreement_id }));
}
