/**
 * The registry (bureau) core, pure: organization types, API key scopes, id and token formats,
 * agent vocabulary, purpose codes, report kinds and alert rule, the trust score model and the
 * webhook URL rule. docs/registry.md describes every rule.
 */
export { RegistryError, type RegistryErrorCode } from "./errors.js";
export { ORG_TYPES, ORG_STATUSES, MAX_NAME_LENGTH, isOrgType, type OrgType, type OrgStatus } from "./orgs.js";
export { SCOPES, allowedScopes, defaultScopes, inOrder, isScope, missingScopes, resolveScopes, type Scope } from "./scopes.js";
export {
  ID_PREFIXES,
  ID_RANDOM_BYTES,
  KEY_TOKEN_PATTERN,
  TOKEN_MARKER,
  TOKEN_PREFIX_LENGTH,
  TOKEN_RANDOM_BYTES,
  formatId,
  formatKeyToken,
  idPattern,
  isId,
  looksLikeKeyToken,
  tokenHash,
  tokenPrefix,
  type IdKind,
} from "./ids.js";
export {
  AGENT_ID_PATTERN,
  AGENT_STATUSES,
  PRINCIPAL_ID_PATTERN,
  VERIFICATION_LEVELS,
  canMoveAgent,
  isAgentId,
  isAgentStatus,
  isVerificationLevel,
  type AgentStatus,
  type VerificationLevel,
} from "./agents.js";
export { PURPOSE_CODES, RECENT_EVIDENCE_LIMIT, isPurposeCode, type PurposeCode } from "./inquiries.js";
export {
  DEFAULT_REPORT_DAILY_CAP,
  MAX_SUMMARY_LENGTH,
  REPORT_KINDS,
  SCORE_DROP_THRESHOLD,
  alertForReport,
  isReportKind,
  utcDay,
  type ReportKind,
} from "./reports.js";
export {
  BASE_POINTS,
  COLD_START_AGE_MS,
  COLD_START_REPORTS,
  PENALTY_POINTS,
  SCORE_MAX,
  SCORE_MIN,
  TRANSACTION_POINTS,
  TRANSACTION_POINTS_CAP,
  scoreAgent,
  type ReportCounts,
  type ScoreFacts,
  type ScoreReason,
  type ScoreReasonCode,
  type TrustScore,
} from "./score.js";
export { ADVERSE_BY_SEVERITY, countReporters, isContributor, type ReporterCounts } from "./reporters.js";
export { MAX_WEBHOOK_URL_LENGTH, isLoopbackHost, parseWebhookUrl } from "./webhook-url.js";
export {
  AGENT_POP_SKEW_MS,
  AGENT_POP_TYP,
  ISSUER_KEY_POP_TYP,
  checkAgentPop,
  checkIssuerKeyPop,
  signAgentPop,
  signIssuerKeyPop,
  type AgentPop,
  type AgentPopExpectation,
  type AgentPopFields,
  type IssuerKeyPop,
  type IssuerKeyPopFields,
  type PopCheck,
} from "./key-proof.js";
