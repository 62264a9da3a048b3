/** The evaluation engine's public surface. */
export { evaluate } from "./evaluate.js";
export { REASONS, REASON_CODES, countsAsAttempt, decisionFor, isReasonCode } from "./reasons.js";
export type { Finding, ReasonCode, ReasonInfo, RequiredAction, SvcDecision, Verdict } from "./reasons.js";
export { DEFAULT_POLICY, NO_REVOCATIONS } from "./types.js";
export type * from "./types.js";
