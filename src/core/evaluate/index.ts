/** The evaluation engine's public surface. */
export { evaluate } from "./evaluate.js";
export { evaluateCondition, evaluateConditions } from "./delegation-conditions.js";
export { evaluateChain } from "./delegation-chain.js";
export { evaluateApproval } from "./delegation-approval.js";
export { effectiveStatus, suspensionReason } from "./delegation-status.js";
export { REASONS, REASON_CODES, countsAsAttempt, decisionFor, isReasonCode } from "./reasons.js";
export type { Finding, ReasonCode, ReasonInfo, RequiredAction, SvcDecision, Verdict } from "./reasons.js";
export { DEFAULT_POLICY, NO_REVOCATIONS } from "./types.js";
export type * from "./types.js";
