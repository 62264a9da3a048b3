/**
 * The typed error of the delegation, agreement and ledger stores: a record that cannot be
 * stored as given. Branch on `code`, never on the message. Refusals that are verdicts (a budget
 * that would be exceeded, a revoked record) are results, not errors: see src/store/ledger/spend.ts.
 */

/** Stable codes of the record stores. */
export type RecordStoreErrorCode =
  /** The record does not match its JSON Schema (the message lists the broken rules). */
  | "RECORD_INVALID"
  /** The ledger that came with a record does not verify (hashes, sequence, intents, amounts). */
  | "LEDGER_INVALID"
  /** The ledger imported with a new record holds an (action, outcome) pair twice (src/store/ledger/import.ts). */
  | "LEDGER_CONFLICT"
  /**
   * An acknowledgement names a registry organization (role merchant/psp/issuer, `id` an
   * org id) but is not signed by a live key that organization registered (./ack-keys.ts).
   */
  | "ACK_KEY_UNREGISTERED"
  /** The agreement names a delegation that is not stored. */
  | "DELEGATION_NOT_FOUND"
  /** A spend or outcome request that no caller should make (bad amount, time or currency). */
  | "SPEND_INVALID";

/** Thrown by the record stores when asked to store something they must refuse. */
export class RecordStoreError extends Error {
  override readonly name = "RecordStoreError";
  constructor(
    readonly code: RecordStoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}
