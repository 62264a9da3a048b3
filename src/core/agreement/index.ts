/**
 * The intent agreement record: mandates and their signatures, the event log, the spend
 * ledger, acknowledgements, revocation, parent_limits, the status machine, amendments, and
 * the preparation of all of it for the evaluator. Pure: no I/O, no clock.
 */
export * from "./types.js";
export { AgreementError, type AgreementErrorCode } from "./errors.js";
export { MANDATE_TYP, mandateHash, mandateSigningBytes, signMandate, verifyMandate } from "./mandate.js";
export { buildEvent, verifyEventChain, type EventFields } from "./events.js";
export {
  appendLedgerEntry,
  entryIntent,
  entryAfter,
  ledgerSummary,
  spentByIntent,
  verifyLedger,
  withLedgerEntry,
  type LedgerEntryFields,
  type LedgerState,
  type SpentOptions,
} from "./ledger.js";
export { ACK_TYP, ackStates, signAcknowledgement, verifyAcknowledgement, type AckFields } from "./acks.js";
export { REVOCATION_TYP, signRevocation, verifyRevocation, type RevocationState } from "./revocation.js";
export { parentLimitsProblem } from "./limits.js";
export { nextStatus, statusFromEvents } from "./state.js";
export { addMandate, amendMandate, type ChangeOptions, type MandateChanges } from "./amend.js";
export { NEXT_OUTCOMES, outcomeStep, type LaterOutcome, type OutcomeStep } from "./outcomes.js";
export {
  HOLD_OUTCOMES,
  actionState,
  applyEntry,
  countedOf,
  emptyActionState,
  holdStep,
  releasesBudget,
  type ActionState,
  type HoldDecision,
  type HoldOutcome,
  type HoldRefusal,
  type HoldRequest,
  type NewStep,
  type StepEntry,
} from "./holds.js";
export { PAYMENT_PARTY_ROLES, currentPartyClaims, partyClaims, type PartyClaim } from "./parties.js";
export { budgetView, type BudgetInput, type BudgetLine, type BudgetView } from "./budget.js";
export { PUSH_TYP, signRevocationPush, verifyRevocationPush } from "./push.js";
export { prepareAgreement, type PrepareOptions } from "./prepare.js";
export { buildSignedAgreement, renderMandate, type NewAgreement } from "./build.js";
export type { AckState, PreparedAgreement, PreparedMandate, SignatureState } from "./prepared.js";
