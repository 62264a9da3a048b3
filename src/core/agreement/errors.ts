/**
 * Errors of the agreement builders (signing, amending, appending). Verifiers never throw:
 * they report a state or a problem sentence instead. Branch on `code`, never on the message.
 */

/** Stable codes of the agreement builders. */
export type AgreementErrorCode =
  | "INTENT_NOT_FOUND"
  | "INTENT_DUPLICATE"
  | "INTENT_ID_CHANGED"
  | "CURRENCY_CHANGE_WITH_SPEND"
  | "SIGNER_NOT_PRINCIPAL"
  | "ILLEGAL_TRANSITION"
  | "EVENT_LOG_INVALID"
  | "LEDGER_ENTRY_INVALID"
  | "LEDGER_UNKNOWN"
  | "LEDGER_ENTRIES_UNATTRIBUTED";

/** Thrown by the agreement builders when asked to build something invalid. */
export class AgreementError extends Error {
  override readonly name = "AgreementError";
  constructor(
    readonly code: AgreementErrorCode,
    message: string,
  ) {
    super(message);
  }
}
