/**
 * Inputs and output of the evaluation engine. Everything that costs (signature checks, hash
 * chains, parsing times and amounts) happens once per record revision in `prepare*`
 * functions; `evaluate` then only reads these prepared facts, so it is pure, synchronous and
 * allocation-light on the hot path.
 */
import type { HashString } from "../canonical/index.js";
import type { Rate } from "../money/index.js";
import type { AckRole, IntentAgreement, Mandate } from "../agreement/types.js";
import type { ChainLink, Condition, Delegation, Scope } from "../delegation/types.js";
import type { Finding, ReasonCode, RequiredAction, SvcDecision, Verdict } from "./reasons.js";

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

/** Signature state of one mandate. */
export type SignatureState = "valid" | "missing" | "invalid";

/** Per-role acknowledgement state against the current mandate hash. */
export type AckState = "current" | "outdated" | "missing";

/** A mandate with everything the engine needs precomputed. */
export interface PreparedMandate {
  mandate: Mandate;
  hash: HashString;
  signature: SignatureState;
  /** Key id of the signing principal key, when the mandate names one. */
  principalKid?: HashString;
  ceilingMinor?: bigint;
  sliceMinor?: bigint;
  notBeforeMs?: number;
  expiresAtMs?: number;
  /** State of every role in `required_acknowledgements`. */
  acks: ReadonlyArray<{ role: AckRole; state: AckState }>;
  /** Spent under this intent per the ledger (minor units of the mandate currency). */
  spentMinor: bigint;
}

export interface PreparedAgreement {
  agreement: IntentAgreement;
  mandates: PreparedMandate[];
  /** First problem in the event chain, or undefined when intact. */
  eventChainProblem?: string;
  /** "ok", "unknown" (ledger omitted) or a description of the first problem. */
  ledger: { state: "ok" } | { state: "unknown" } | { state: "broken"; problem: string };
  ledgerAsOfMs: number;
  ledgerSequence: number;
  /** Total spent across intents (minor units of parent_limits currency, or of the mandates when they share one). */
  totalSpentMinor: bigint;
  /** First parent_limits violation, or undefined. */
  parentLimitsProblem?: string;
  parentCeilingMinor?: bigint;
  parentCumulativeMinor?: bigint;
  revocation: "none" | "valid" | { state: "invalid"; problem: string };
}

/** A scope with amounts in minor units. */
export interface PreparedScope {
  scope: Scope;
  ceilingMinor?: bigint;
  cumulativeMinor?: bigint;
  actionTypes?: ReadonlySet<string>;
  merchants?: ReadonlySet<string>;
  categories?: ReadonlySet<string>;
  intents?: ReadonlySet<string>;
}

export interface PreparedLink {
  link: ChainLink;
  expiresAtMs: number;
  /** The stored delegation of this link is revoked (set when the chain was read from the store: `withStoredChain`). */
  revoked?: boolean;
  /** The stored delegation of this link is suspended (set by `withStoredChain`): everything below it is suspended too. */
  suspended?: boolean;
}

export interface PreparedDelegation {
  delegation: Delegation;
  grantedAtMs: number;
  expiresAtMs: number;
  scope: PreparedScope;
  conditions: Condition[];
  chain: PreparedLink[];
  /** First structural chain problem (discontinuity), or undefined. */
  chainBroken?: string;
  /** First widening found (field and link), or undefined. */
  chainWidened?: string;
  reconfirmedAtMs?: number;
  /** Key id of `principal.public_key`, when the delegation names the principal's key. */
  principalKid?: HashString;
  /** Problems found while preparing (each also fails closed: the delegation counts as expired). */
  problems?: string[];
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
