/**
 * The data-plane side of verify that is not HTTP: `verifyAction` (gather, decide, commit), the
 * candidate cache and the record cache under it, the candidates a verify evaluates, and the
 * revocation index. The ledger transactions (spend, later outcomes) are the ledger
 * repository's (src/store/ledger).
 */
export { verifyAction, type VerifyDeps } from "./verify-action.js";
export { VerifyError, type Decided, type Effect, type Question } from "./pipeline/decide.js";
export { StoreGather, type Evidence, type Gather, type GatherUpkeep } from "./gather/index.js";
export { CandidateCache, type CandidateCacheOptions, type ChangeNoticeFeed } from "./gather/candidate-cache.js";
export { DecisionLog, storeDecisions, type DecisionStore } from "./commit/decision-log.js";
export { DEFAULT_CACHE_SIZE, RecordCache, type CacheStats, type RecordCacheOptions } from "./caches/record-cache.js";
export { loadCandidates, type LoadCandidatesOptions, type VerifyCandidate } from "./caches/candidates.js";
export { agreementForPreparation, withLedgerTotals, type LedgerTotals } from "./caches/overlay.js";
export { allowedSpendFor, type AllowedSpendOptions } from "./pipeline/spend-request.js";
export { RevocationChannel, type RevocationChannelOptions, type RevocationSource, type RevocationSourceEvents } from "../store/index.js";
export { DEFAULT_STALE_AFTER_MS, RevocationIndex, type RevocationIndexEvents, type RevocationIndexOptions } from "./revocation/index.js";
export { type ApprovalOptions, VerifyApprovals } from "./approvals.js";
export { FollowedCache } from "./caches/followed-cache.js";
export { refusalQueue, spendQueue } from "./commit/queues.js";
export { verifyMetrics, type VerifyMetrics } from "./metrics.js";
export { AckDomainDirectory } from "./pipeline/ack-domains.js";
export type { ProbePayment } from "./pipeline/grant-probe.js";
export { checkPresentedMandate, recordAcceptedMandate, refusalText } from "./pipeline/mandates.js";
export { VERIFY_BODY_SCHEMA, VERIFY_RESPONSE_SCHEMA, type VerifyRequest } from "./pipeline/request.js";
export { checkSignedRequest } from "./pipeline/signed-request.js";
export { controllerPathMetrics } from "./revocation/controller-path-metrics.js";
export { ControllerPath } from "./revocation/controller-path.js";
export { type Freshness, WatchedRevocationIndex } from "./revocation/kube-watch-index.js";
export { kubeWatchEnabled, type KubeWatchSettings, loadKubeWatchSettings } from "./revocation/kube-watch-settings.js";
// The Kubernetes watch is imported only where it is enabled (it loads @kubernetes/client-node): import("./revocation/kube-watch.js").
export type { KubeRevocationWatch } from "./revocation/kube-watch.js";
export { loadVerifySettings, type VerifySettings } from "./settings.js";
