/**
 * What `POST /v1/verify` evaluates: the agent's live candidate agreements, prepared (from the
 * cache) and overlaid with the ledger totals read now.
 *
 * Promise: one statement reads every candidate's revision, generation and totals (one
 * snapshot; on the verify path it is the same statement as the agent's, `readAgentSnapshot`,
 * and `prepareCandidates` takes its rows); records are fetched only for cache misses (one statement per kind). Each
 * candidate's ledger totals are exactly those of that first read, as of `now`. A record that
 * changed between the two reads is prepared at the newer version (its totals are still those
 * of the first read, which the spend transaction re-checks under its lock anyway).
 *
 * The candidates are kept between verifies by the candidate cache (../gather/candidate-cache.ts).
 */
import type { PreparedDelegationWithProblems } from "../../core/delegation/index.js";
import type { PreparedAgreement } from "../../core/evaluate/index.js";
import { loadActiveForAgent, loadAgreementRecords, type ActiveAgreementRow, loadDelegationRecords, type Queryable } from "../../store/index.js";
import { recordKey, type RecordCache } from "./record-cache.js";
import { withLedgerTotals, type LedgerTotals } from "./overlay.js";

/** One agreement the action may be evaluated against. */
export interface VerifyCandidate {
  agreementId: string;
  revision: number;
  orgId: string | null;
  /** Prepared, with the totals read now. */
  agreement: PreparedAgreement;
  /** The bound delegation, prepared; undefined when the agreement has none. */
  delegation?: PreparedDelegationWithProblems;
  /**
   * For `EvalContext.delegationSpentMinor`: spent under the delegation across all its
   * agreements (minor units of its scope currency); undefined when unknown (spend in another
   * currency) or when there is no delegation.
   */
  delegationSpentMinor?: bigint;
  /** The row as read. */
  row: ActiveAgreementRow;
}

/** Options of `loadCandidates`. */
export interface LoadCandidatesOptions {
  /** Verify time, epoch ms: the totals are as of it. */
  now: number;
  /** Most candidates (default: the store's MAX_CANDIDATES). */
  limit?: number;
}

/** The ledger totals a row holds, as of `asOfMs`. */
export function totalsOf(row: ActiveAgreementRow, asOfMs: number): LedgerTotals {
  return { ledgerSequence: row.ledgerSequence, ledgerHead: row.ledgerHead, spent: row.spent, asOfMs };
}

/** The live candidates of `agentId` (see the module comment), ordered by agreement id. */
export async function loadCandidates(db: Queryable, cache: RecordCache, agentId: string, opts: LoadCandidatesOptions): Promise<VerifyCandidate[]> {
  const rows = await loadActiveForAgent(db, agentId, { records: false, ...(opts.limit !== undefined ? { limit: opts.limit } : {}) });
  return prepareCandidates(db, cache, rows, { now: opts.now });
}

/**
 * The candidates of `rows` already read without records (`loadActiveForAgent` with
 * `records: false`, or `readAgentSnapshot`), prepared from the cache; records are fetched only
 * for cache misses. With no rows it reads nothing.
 */
export async function prepareCandidates(
  db: Queryable,
  cache: RecordCache,
  rows: readonly ActiveAgreementRow[],
  opts: { now: number },
): Promise<VerifyCandidate[]> {
  if (rows.length === 0) return [];
  // One agent's rows (every row's agent is the snapshot's); the cache keys name the agent too (recordKey).
  const agentId = rows[0]?.agentId ?? "";
  const missA = rows.filter((r) => !cache.hasAgreement(recordKey(r.agentId, r.agreementId), r.revision)).map((r) => r.agreementId);
  const missD = [
    ...new Set(
      rows.flatMap((r) =>
        r.delegation && !cache.hasDelegation(recordKey(r.agentId, r.delegation.delegationId), r.delegation.generation) ? [r.delegation.delegationId] : [],
      ),
    ),
  ];
  const [agreements, delegations] = await Promise.all([
    loadAgreementRecords(db, missA, agentId),
    loadDelegationRecords(
      db,
      missD.map(() => agentId),
      missD,
    ),
  ]);
  const fetchedA = new Map(agreements.map((a) => [a.agreementId, a]));
  const fetchedD = new Map(delegations.map((d) => [d.delegationId, d]));

  return Promise.all(
    rows.map(async (row): Promise<VerifyCandidate> => {
      const fa = fetchedA.get(row.agreementId);
      const revision = fa?.revision ?? row.revision;
      // A cached entry may be evicted between the check above and here: then read it now.
      const base = await cache.agreement(recordKey(row.agentId, row.agreementId), revision, async () => {
        const record = fa?.record ?? (await loadAgreementRecords(db, [row.agreementId], row.agentId))[0]?.record;
        if (!record) throw new Error(`agreement ${row.agreementId} disappeared between two reads`);
        return record;
      });
      const out: VerifyCandidate = {
        agreementId: row.agreementId,
        revision,
        orgId: row.orgId,
        agreement: withLedgerTotals(base, totalsOf(row, opts.now)),
        row,
      };
      const d = row.delegation;
      if (d) {
        const fd = fetchedD.get(d.delegationId);
        out.delegation = await cache.delegation(recordKey(row.agentId, d.delegationId), fd?.generation ?? d.generation, async () => {
          const record = fd?.record ?? (await loadDelegationRecords(db, [row.agentId], [d.delegationId]))[0]?.record;
          if (!record) throw new Error(`delegation ${d.delegationId} disappeared between two reads`);
          return record;
        });
        if (d.spentMinor !== undefined) out.delegationSpentMinor = d.spentMinor;
      }
      return out;
    }),
  );
}
