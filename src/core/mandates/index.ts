/** Mandates from open mandate protocols, verified and imported as delegation evidence. */
export { Ap2ImportError, type Ap2ImportErrorCode } from "./ap2-errors.js";
export { OPEN_PAYMENT_MANDATE_VCT, importOpenPaymentMandate, type Ap2ImportOptions } from "./ap2.js";
export type { MandateProblem, MandateProblemCode } from "./sd-jwt-problems.js";
export { resolveDisclosures, type DisclosureResolution, type UndisclosedDigest } from "./sd-jwt-disclosures.js";
export {
  DEFAULT_KB_MAX_AGE_MS,
  ISSUER_JWT_TYPES,
  KB_JWT_TYP,
  MAX_SD_JWT_LENGTH,
  decodeMandatePresentation,
  verifyMandatePresentation,
  type DecodedMandate,
  type MandateVerification,
  type MandateVerifyOptions,
  type TrustedIssuerKey,
} from "./sd-jwt.js";
export {
  MANDATE_DELEGATION_PREFIX,
  acceptOpenPaymentMandate,
  mandateDelegationId,
  type MandateAcceptance,
  type MandateAgent,
  type MandateRefusal,
  type MandateRefusalCode,
} from "./accept.js";
export { MANDATE_INTENT_ID, mandateLedgerRecord, type LedgerAgreementRecord } from "./ledger-record.js";
export { CONSTRAINT_CLAIMS, isConstraintObject, withheldConstraintProblems } from "./withheld-constraints.js";
