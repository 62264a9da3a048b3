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
 * The candidate prepared for a row is kept with that row object (a WeakMap): the rows of an
 * agent's snapshot (./snapshots.ts) are replaced, never changed, when their totals or records
 * change, so a warm verify only stamps the kept candidate with its own time (`ledgerAsOfMs`:
 * the database is the system of record, and the snapshot follows it).
 */
import type { PreparedDelegationWithProblems } from "../../core/delegation/index.js";
import type { PreparedAgreement } from "../../core/evaluate/index.js";
import { loadActiveForAgent, loadAgreementRecords, type ActiveAgreementRow } from "../../store/agreements-read.js";
import { loadDelegationRecords } from "../../store/delegations.js";
import type { Queryable } from "../../store/pool.js";
import type { RecordCache } from "./record-cache.js";
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

/** The candidate prepared for a row object (see the module comment). */
const preparedFor = new WeakMap<ActiveAgreementRow, VerifyCandidate>();

function stamped(c: VerifyCandidate, nowMs: number): VerifyCandidate {
  return { ...c, agreement: { ...c.agreement, ledgerAsOfMs: nowMs } };
}

/** The ledger totals a row holds, as of `asOfMs`. */
function totalsOf(row: ActiveAgreementRow, asOfMs: number): LedgerTotals {
  return { ledgerSequence: row.ledgerSequence, ledgerHead: row.ledgerHead, spent: row.spent, asOfMs };
}

/**
 * Carries the candidate prepared for row `from` over to row `to`, which the same process made
 * from it after a spend (./snapshots.ts, `noteSpend`): when both name the same agreement
 * revision and the same delegation generation, `to`'s candidate is `from`'s with `to`'s totals
 * overlaid (exactly what preparing `to` from the cache would give), so the next verify of the
 * agent neither looks the records up in the cache nor awaits them. Otherwise nothing is kept
 * and `to` is prepared as usual.
 */
export function carryPrepared(from: ActiveAgreementRow, to: ActiveAgreementRow): void {
  const c = preparedFor.get(from);
  if (!c || to.agreementId !== from.agreementId || to.revision !== from.revision) return;
  const d = from.delegation;
  const e = to.delegation;
  if (d?.delegationId !== e?.delegationId || d?.generation !== e?.generation) return;
  const next: VerifyCandidate = {
    ...c,
    agreement: withLedgerTotals(c.agreement, totalsOf(to, c.agreement.ledgerAsOfMs)),
    row: to,
  };
  if (e?.spentMinor !== undefined) next.delegationSpentMinor = e.spentMinor;
  else delete next.delegationSpentMinor;
  preparedFor.set(to, next);
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
export async function prepareCandidates(db: Queryable, cache: RecordCache, rows: readonly ActiveAgreementRow[], opts: { now: number }): Promise<VerifyCandidate[]> {
  if (rows.length === 0) return [];
  const kept = rows.map((r) => preparedFor.get(r));
  if (kept.every((c) => c !== undefined)) return kept.map((c) => stamped(c, opts.now));
  const missA = rows.filter((r) => !cache.hasAgreement(r.agreementId, r.revision)).map((r) => r.agreementId);
  const missD = [
    ...new Set(rows.flatMap((r) => (r.delegation && !cache.hasDelegation(r.delegation.delegationId, r.delegation.generation) ? [r.delegation.delegationId] : []))),
  ];
  const [agreements, delegations] = await Promise.all([loadAgreementRecords(db, missA), loadDelegationRecords(db, missD)]);
  const fetchedA = new Map(agreements.map((a) => [a.agreementId, a]));
  const fetchedD = new Map(delegations.map((d) => [d.delegationId, d]));

  return Promise.all(
    rows.map(async (row): Promise<VerifyCandidate> => {
      const fa = fetchedA.get(row.agreementId);
      const revision = fa?.revision ?? row.revision;
      // A cached entry may be evicted between the check above and here: then read it now.
      const base = await cache.agreement(row.agreementId, revision, async () => {
        const record = fa?.record ?? (await loadAgreementRecords(db, [row.agreementId]))[0]?.record;
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
        out.delegation = await cache.delegation(d.delegationId, fd?.generation ?? d.generation, async () => {
          const record = fd?.record ?? (await loadDelegationRecords(db, [d.delegationId]))[0]?.record;
          if (!record) throw new Error(`delegation ${d.delegationId} disappeared between two reads`);
          return record;
        });
        if (d.spentMinor !== undefined) out.delegationSpentMinor = d.spentMinor;
      }
      preparedFor.set(row, out);
      return out;
    }),
  );
}
