/**
 * A ledger that arrives WITH an agreement record (a manifest, a Delegation's embedded
 * agreement, any API that stores agreements). The service is the system of record for
 * ledgers (docs/threat-model/ledger.md): a declaration never adds, changes or releases an
 * entry of a ledger the service holds.
 *
 * - `importLedger`: ONLY when the record creates the agreement (the service never held it), its
 *   verified ledger is taken as the history before the service: the entries are inserted marked
 *   `imported`, and each action counts at face value (its amount in force, whatever its
 *   outcome: a `failed` in it releases nothing; core `spentByIntent(…, {releases: false})`).
 *   An imported action_id is spent: a verify of it is ACTION_REUSED (never an ALLOW matching
 *   the imported entry), and no outcome moves it (./outcome.ts). So an import can only lower
 *   what is left of a budget.
 * - `declaredLedgerIgnored`: for an agreement the service holds, the declared ledger is never
 *   written; this says why it was ignored when it is not a prefix of the stored ledger (the
 *   caller reports it), or undefined when it is one (a stale copy: nothing to say).
 *
 * The caller has verified the ledger (`verifyLedger`) and holds the agreement row's lock
 * (./index.ts, "Lock order").
 */
import type { IntentAgreement, LedgerEntry } from "../../core/agreement/index.js";
import type { Queryable } from "../pool.js";
import type { LedgerState } from "./next-entry.js";
import { insertLedgerRows, ledgerHashAt, ledgerRow, writeSpendTotals } from "./rows.js";
import { moveHead } from "./head.js";

/** Stores `ledger` as the imported history of the agreement `full` this transaction created; returns the count. */
export async function importLedger(q: Queryable, agentId: string, full: IntentAgreement, ledger: readonly LedgerEntry[]): Promise<number> {
  const last = ledger[ledger.length - 1];
  if (!last) return 0;
  await insertLedgerRows(
    q,
    agentId,
    full.agreement_id,
    ledger.map((e) => ledgerRow(e, full.mandates)),
    { imported: true },
  );
  await moveHead(q, agentId, full.agreement_id, ledger.length, last.entry_hash);
  await writeSpendTotals(q, agentId, full, { releases: false });
  return ledger.length;
}

/**
 * Why the declared `ledger` of a stored agreement (its ledger `stored`) was ignored, or
 * undefined when it is a prefix of the stored one (see the module comment).
 */
export async function declaredLedgerIgnored(
  q: Queryable,
  agentId: string,
  agreementId: string,
  stored: { sequence: number; head: LedgerState["head"] | null },
  ledger: readonly LedgerEntry[],
): Promise<string | undefined> {
  if (ledger.length === 0) return undefined;
  const ignored = (why: string) =>
    `the declared ledger (${ledger.length} entries) was ignored: ${why}; the service keeps agreement ${agreementId}'s ledger (${stored.sequence} entries), and a declaration never adds, changes or releases an entry`;
  if (ledger.length > stored.sequence) return ignored(`it is longer than the stored ledger`);
  const storedHash = ledger.length === stored.sequence ? stored.head : await ledgerHashAt(q, agentId, agreementId, ledger.length);
  if (storedHash !== ledger[ledger.length - 1]?.entry_hash) return ignored(`it differs from the stored ledger at or before sequence ${ledger.length}`);
  return undefined;
}
