/**
 * A ledger that arrives WITH an agreement record (a manifest, an import): it never rewrites
 * history. Its first min(stored, given) entries must be the stored ones (compared by the entry
 * hash at that sequence, which commits to everything before it); a longer ledger extends the
 * stored one (the new entries are inserted, the head moved and the per-intent totals
 * recomputed with the core's rule); a shorter or equal one adds nothing. Anything else is
 * LEDGER_CONFLICT. The caller has verified the ledger (`verifyLedger`) and holds the agreement
 * row's lock (./index.ts, "Lock order").
 */
import type { IntentAgreement, LedgerEntry } from "../../core/agreement/index.js";
import type { Queryable } from "../pool.js";
import { RecordStoreError } from "../record-errors.js";
import type { LedgerState } from "./next-entry.js";
import { insertLedgerRows, ledgerHashAt, ledgerRow, writeSpendTotals } from "./rows.js";
import { moveHead } from "./head.js";

/** Appends the part of `ledger` beyond the stored one `stored` (see the module comment); returns the count. */
export async function extendLedger(q: Queryable, full: IntentAgreement, stored: { sequence: number; head: LedgerState["head"] | null }, ledger: readonly LedgerEntry[]): Promise<number> {
  const id = full.agreement_id;
  const have = stored.sequence;
  const common = Math.min(have, ledger.length);
  if (common > 0) {
    const storedHash = common === have ? stored.head : await ledgerHashAt(q, id, common);
    if (storedHash !== ledger[common - 1]?.entry_hash) {
      throw new RecordStoreError("LEDGER_CONFLICT", `the agreement's ledger differs from the stored one at or before sequence ${common}; history is never rewritten`);
    }
  }
  if (ledger.length <= have) return 0;
  const fresh = ledger.slice(have);
  await insertLedgerRows(q, id, fresh.map((e) => ledgerRow(e, full.mandates)));
  const last = fresh[fresh.length - 1];
  if (last) await moveHead(q, id, ledger.length, last.entry_hash);
  await writeSpendTotals(q, full);
  return fresh.length;
}
