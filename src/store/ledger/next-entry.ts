/**
 * The next ledger entry from the stored ledger STATE (sequence and head) instead of the whole
 * ledger: what `appendLedgerEntry` of src/core/agreement computes, without loading every entry.
 *
 * Promise: for a ledger of n entries whose last `entry_hash` is `head`,
 * `nextLedgerEntry({sequence: n, head}, fields)` equals `appendLedgerEntry(ledger, fields)`
 * (a unit test holds the two together): sequence n + 1, `prev_entry_hash` = head (absent on
 * the first entry), `entry_hash` = SHA-256 of JCS(entry without `entry_hash`). Fields the core
 * would refuse are refused here too (RecordStoreError SPEND_INVALID).
 */
import { AgreementError, entryAfter, type LedgerEntry, type LedgerEntryFields } from "../../core/agreement/index.js";
import type { HashString } from "../../core/canonical/index.js";
import { RecordStoreError } from "../record-errors.js";

/** The stored state of a ledger. */
export interface LedgerState {
  /** Number of entries (0 for an empty ledger). */
  sequence: number;
  /** entry_hash of the last entry; undefined when empty. */
  head: HashString | undefined;
}

/** The entry that follows a ledger in `state` (see the module comment). */
export function nextLedgerEntry(state: LedgerState, fields: LedgerEntryFields): LedgerEntry {
  if (!Number.isSafeInteger(state.sequence) || state.sequence < 0)
    throw new RecordStoreError("SPEND_INVALID", "ledger sequence must be a whole number at or above 0");
  if ((state.sequence === 0) !== (state.head === undefined)) throw new RecordStoreError("SPEND_INVALID", "a ledger has a head exactly when it has entries");
  try {
    return entryAfter(state.sequence, state.head, fields);
  } catch (e) {
    if (e instanceof AgreementError) throw new RecordStoreError("SPEND_INVALID", e.message);
    throw e;
  }
}
