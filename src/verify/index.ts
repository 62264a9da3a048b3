/**
 * The data-plane side of verify that is not HTTP: the record cache, the candidates a verify
 * evaluates, the revocation index, and the ledger transactions (spend, later outcomes).
 */
export { DEFAULT_CACHE_SIZE, RecordCache, type CacheStats, type RecordCacheOptions } from "./cache.js";
export { loadCandidates, type LoadCandidatesOptions, type VerifyCandidate } from "./candidates.js";
export { agreementForPreparation, withLedgerTotals, type LedgerTotals } from "./overlay.js";
export { nextLedgerEntry, type LedgerState } from "./ledger-next.js";
export {
  recordAllowedSpend,
  type AllowedSpend,
  type SpendLimits,
  type SpendOptions,
  type SpendRefusal,
  type SpendResult,
} from "./spend.js";
export { allowedSpendFor, type AllowedSpendOptions } from "./spend-request.js";
export { recordOutcome, type OutcomeRequest, type OutcomeResult } from "./outcome.js";
export { NEXT_OUTCOMES, outcomeStep, type LaterOutcome, type OutcomeStep } from "./outcome-rules.js";
export {
  RevocationChannel,
  type RevocationChannelOptions,
  type RevocationSource,
  type RevocationSourceEvents,
} from "./revocation-channel.js";
export {
  DEFAULT_STALE_AFTER_MS,
  RevocationIndex,
  type RevocationIndexEvents,
  type RevocationIndexOptions,
} from "./revocation-index.js";
