/**
 * Inputs and output of the evaluation engine. Everything that costs (signature checks, hash
 * chains, parsing times and amounts) happens once per record revision in `prepare*`
 * functions; `evaluate` then only reads these prepared facts, so it is pure, synchronous and
 * allocation-light on the hot path.
 */
import type { Rate } from "../money/index.js";
import type { Finding, ReasonCode, RequiredAction, SvcDecision, Verdict } from "./reasons.js";

// Built beside their producers (core/agreement, core/delegation); part of the evaluator's vocabulary.
export type { SignatureState, AckState, PreparedMandate, PreparedAgreement } from "../agreement/index.js";
export type { PreparedScope, PreparedLink, PreparedDelegation } from "../delegation/index.js";

/** The action an agent proposes. Amount in major units of `currency`. */
export interface Action {
  action_id: string;
  action_type: string;
  amount: number;
  currency: string;
  proposed_at: string;
  agent_id?: string;
  merchant?: string;
  item?: string;
  category?: string;
  intent_id?: string;
}

/** Revocation state known to the caller (in-memory index fed by watches and NOTIFY). */
export interface RevocationView {
  isDelegationRevoked(delegationId: string): boolean;
  isAgreementRevoked(agreementId: string): boolean;
}

export const NO_REVOCATIONS: RevocationView = {
  isDelegationRevoked: () => false,
  isAgreementRevoked: () => false,
};

/** Tunables of the documented policy. */
export interface EvalPolicy {
  /** ledger_as_of older than this steps up. Default 60 000 ms. */
  ledgerStalenessMs: number;
  /** Risk score at or above which the service decides REVOKE. Default 90. */
  revokeRiskScore: number;
  /** Denied attempts within the burst window at which the service decides REVOKE. Default 5. */
  denialBurstCount: number;
  /** Standing / high-privilege grants must be re-confirmed this often. Default 30 days. */
  reconfirmEveryMs: number;
}

export const DEFAULT_POLICY: EvalPolicy = {
  ledgerStalenessMs: 60_000,
  revokeRiskScore: 90,
  denialBurstCount: 5,
  reconfirmEveryMs: 30 * 24 * 3600_000,
};

export interface EvalContext {
  /** Evaluation time, epoch milliseconds. */
  now: number;
  policy: EvalPolicy;
  revocations: RevocationView;
  /** Risk score 0-100 supplied by the caller or a risk engine. */
  riskScore?: number;
  principalPresent?: boolean;
  /** Units of `to` per unit of `from` for the action's day, when known. */
  rate?: (from: string, to: string) => Rate | undefined;
  /** Denied attempts by this agent within the burst window (the agent's recent behaviour). */
  recentDenials?: number;
  /** The ledger sequence the check carries; higher than the ledger's is a truncated ledger. */
  ledgerSequence?: number;
  /** Spent so far under the delegation across all its agreements, minor units of scope currency. */
  delegationSpentMinor?: bigint;
  /** Set when revocation state may be stale (watch down longer than its bound). */
  revocationStateStale?: boolean;
  /**
   * Reasons the principal's approval of exactly this request clears (src/core/approvals): their
   * findings are dropped before the verdict is taken. Only STEP_UP reasons are ever passed.
   */
  approvedReasons?: ReadonlySet<ReasonCode>;
}

/** The engine's answer. */
export interface Decision {
  verdict: Verdict;
  svc_decision: SvcDecision;
  reasons: ReasonCode[];
  messages: Finding[];
  required_action: RequiredAction;
  /** The intent the action was evaluated against, when one was. */
  intent_id?: string;
  /**
   * The action's amount in minor units of the intent's currency (what ALLOW records); for
   * delegation evidence evaluated alone, of the scope's currency.
   */
  amount_minor?: bigint;
}
