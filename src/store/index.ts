/**
 * The public surface of src/store: what other areas import from it. Import it from other areas
 * through this file only (lint rule `areas/index-only`, hack/eslint/areas.js); modules inside
 * src/store import one another directly.
 */
export { insertAckKey, listAckKeys, paymentParties, revokeAckKey } from "./ack-keys.js";
export { agentStanding, type AgentStanding, agreementFacts, standingFrom } from "./agent-standing.js";
export { type AgentForVerify, type AgentRecord, getAgent, getAgentForVerify, insertAgent, registrationLogEntry, setAgentStatus } from "./agents.js";
export {
  type ActiveAgreementRow,
  agreementsAcknowledgedBy,
  listRevokedAgreementIds,
  loadActiveForAgent,
  loadAgreementRecords,
  lockAgreementByMandate,
} from "./agreements-read.js";
export { type AgreementRecord, upsertAgreement } from "./agreements.js";
export { enqueueFanout, expandFanouts } from "./alert-fanout.js";
export {
  addPasskey,
  approvalsOfPrincipal,
  decideApproval,
  type DecisionEvidence,
  findApproval,
  findApprovalOfAction,
  markApprovalUsed,
  newApprovalId,
  openApproval,
  passkeysOf,
  principalOfAgent,
  raisePasskeyCounter,
  releaseStepUp,
  type StoredApproval,
} from "./approvals.js";
export type { ChangeNotice } from "./changes.js";
export { parseClusterUrl } from "./cluster-url.js";
export { type HeartbeatReading, readHeartbeat, writeHeartbeat } from "./controller-heartbeat.js";
export { isDataException, isDbUnavailable, isUnstorableText } from "./db-errors.js";
export {
  listRevokedDelegationIds,
  loadChainHeads,
  delegationLinkOrgs,
  loadDelegation,
  loadDelegationsById,
  revocationScope,
  loadDelegationRecords,
  loadStoredChain,
  type StoredDelegation,
  upsertDelegation,
  type UpsertDelegationResult,
} from "./delegations.js";
export { readStoredRate, storeRate } from "./fx.js";
export { GroupCommitQueue } from "./group-commit.js";
export { recordInquiry } from "./inquiries.js";
export { insertIssuerKey, listIssuerKeys, revokeIssuerKey, trustedIssuerKeys } from "./issuer-keys.js";
export { findKeyByToken, getKey, issueKey, listKeys, revokeKey } from "./keys.js";
export {
  type AllowedAction,
  allowedActionOf,
  type AllowedSpend,
  ledgerPage,
  recordAllowedSpends,
  recordOutcome,
  expireHolds,
  heldTotals,
  recordHoldStep,
  type HoldStepInput,
  type HoldStepResult,
  type SpendBatchResult,
  type SpendLimits,
  type SpendPeriods,
  type SpendResult,
  HOUR_COUNTERS_FROM,
  ownerKey,
  readPeriodUsage,
  spendTotals,
} from "./ledger/index.js";
export { consistencyProofFor, inclusionProofFor, latestTreeHead, logEntryByHash, logEntryBySequence, LogLookupError } from "./log-read.js";
export { appendLogEntries, appendToLog, type LogAppendInput, type LogAppendOptions, type LogAppendResult } from "./log.js";
export { type RecordedMandate, recordMandate } from "./mandates.js";
export { ensureDatabase, migrate, migrateWhenReachable } from "./migrate.js";
export { createOrg, getOrg, type Org } from "./orgs.js";
export { createPool, loadSynchronousCommit, ping, type PoolOptions, type Queryable, type SynchronousCommit, withTransaction } from "./pool.js";
export { endSession, findSession, type PortalSession } from "./portal-sessions.js";
export { issueSignInToken, redeemSignInToken, registerPrincipalEmail } from "./portal.js";
export { RecordStoreError } from "./record-errors.js";
export { claimCount, claimRecord, claimsOf, claimsOfResource, ownerName, ownerOf, type RecordOwner, releaseSubscriptionClaim } from "./record-owners.js";
export {
  agentsOfPrincipal,
  agreementIdsOfPrincipal,
  agreementView,
  agreementViews,
  type AgreementView,
  delegationsOfAgent,
  delegationsOfPrincipal,
  delegationSpent,
  delegationView,
  delegationViews,
  type DelegationView,
  type RecordOwners,
} from "./record-views.js";
export { fileReport, recentEvidenceHashes, reporterCounts, type ReportInput, reportKindsByOrg, type StoredReport } from "./reports.js";
export { agentByFingerprint, claimNonce, directoryRows } from "./request-signatures.js";
export { pruneOnce, type PruneResult, type RetentionPolicy } from "./retention.js";
export type { RevocationAnnouncement } from "./revocation/announce.js";
export { RevocationChannel, type RevocationChannelOptions, type RevocationSource, type RevocationSourceEvents } from "./revocation/channel.js";
export { type BeforeInsert, listRevocations, MAX_PAGE, recordRevocation } from "./revocation/feed.js";
export { appendRevocationToLog, type RevocationLogAppender } from "./revocation/log.js";
export {
  type RecordedRevocation,
  logAndAlertRevocation,
  type RevocationLogging,
  type RevocationTarget,
  revokeAndRecord,
  type RevokedBy,
} from "./revocation/record.js";
export { agreementLogSequence, agreementRow, type AgreementRow, revokedDelegationIds } from "./status-reads.js";
export { createSubscription, deactivateSubscription, listSubscriptions, newEventId, subscribeWithinCap } from "./subscriptions.js";
export {
  decisionKey,
  findVerifyDecision,
  type NewVerifyDecision,
  type SavedRefusal,
  saveRefusalDecisions,
  saveVerifyDecision,
  type StoredVerifyDecision,
} from "./verify-decisions.js";
export { DENIAL_WINDOW_SECONDS, ownsRecord, readAgentSnapshot, revokedCause, type RevokedCause } from "./verify-reads.js";
export {
  type AlertTarget,
  claimDue,
  type ClaimedDelivery,
  enqueueAlert,
  finishDelivered,
  finishFailed,
  releaseClaim,
  WEBHOOKS_CHANNEL,
} from "./webhook-outbox.js";
export { listenForWakeups } from "./webhook-wakeup.js";
export { citusFlag, citusNodeOf, CitusDirect, citusDirectFromEnv, type CitusDirectMode } from "./citus.js";
