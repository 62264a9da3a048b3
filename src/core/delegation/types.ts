/**
 * The delegation record: who authorized which agent to do what, for how long, under which
 * conditions, through which chain of agents.
 */
import type { PrincipalType, IntentAgreement } from "../agreement/index.js";
import type { JwsObject, PublicJwk } from "../jose/index.js";
import type { PeriodLimit } from "../money/index.js";

export type DelegationStatus = "active" | "suspended" | "revoked" | "expired";
export const DELEGATION_STATUSES: readonly DelegationStatus[] = ["active", "suspended", "revoked", "expired"];

export interface PrincipalRef {
  type: PrincipalType;
  id: string;
  /** When present, mandates must be signed by this key. */
  public_key?: PublicJwk;
}

export interface AgentRef {
  agent_id: string;
  public_key?: PublicJwk;
}

/** What a delegation allows. Amounts in major units of `currency`. */
export interface Scope {
  /** Bound intents (mandate `intent_id`s). Empty or absent: every intent of the agreement. */
  intents?: string[];
  currency: string;
  /** Per-transaction ceiling. */
  maximum_amount?: number;
  /** Cumulative total across every action under this delegation. */
  cumulative_maximum?: number;
  /** IANA time zone of the principal for `period_limits` (default UTC). */
  time_zone?: string;
  /** Limits per period on the spend under this delegation (src/core/money/periods.ts). */
  period_limits?: PeriodLimit[];
  /** Allowed action verbs (for example "purchase", "refund"). Absent: none restricted. */
  action_types?: string[];
  /** Resource constraints. Absent: not restricted. */
  merchants?: string[];
  categories?: string[];
  /**
   * Whether refunds under this grant may give budget back (default false). A refund restores
   * budget only when the mandate and every delegation the agreement counts under say so.
   */
  refunds_restore_budget?: boolean;
}

export interface TimeWindowCondition {
  type: "time_window";
  /** HH:MM, 24-hour, local to `timezone`. A window whose end is before its start crosses midnight. */
  start: string;
  end: string;
  /** IANA time zone name, for example Europe/Berlin. */
  timezone: string;
}
export interface MaxRiskScoreCondition {
  type: "max_risk_score";
  value: number;
}
export interface MerchantAllowlistCondition {
  type: "merchant_allowlist";
  merchants: string[];
}
export interface BusinessHoursCondition {
  type: "business_hours_only";
  /** IANA time zone; business hours are Monday to Friday 09:00 to 17:00 there. */
  timezone: string;
}
/**
 * The principal must be present (AP2/Visa "human present"): without `above_amount` and
 * `categories`, for every action; with them, only for an action above `above_amount` (in
 * `currency`; another currency always needs the principal) or in one of `categories` (an action
 * without a category always needs the principal). Elsewhere the agent acts alone ("human not
 * present"). The principal is present when the request says so or approves the request
 * (docs/reference/approvals.md).
 */
export interface PrincipalPresentCondition {
  type: "principal_present";
  above_amount?: number;
  currency?: string;
  categories?: string[];
}
export type Condition = TimeWindowCondition | MaxRiskScoreCondition | MerchantAllowlistCondition | BusinessHoursCondition | PrincipalPresentCondition;
export type ConditionType = Condition["type"];

/** One link of an agent-to-agent chain: `delegator` gave `delegate` the narrowed `scope`. */
export interface ChainLink {
  delegation_id: string;
  delegator: { type: PrincipalType; id: string };
  delegate: { agent_id: string };
  delegated_at: string;
  expires_at: string;
  scope: Scope;
  conditions?: Condition[];
}

export type Privilege = "standard" | "standing" | "high";

/** Evidence that a human approved a standing or high-privilege grant. */
export interface HumanApproval {
  type: "HUMAN_APPROVAL";
  approved_by: string;
  approved_at: string;
  evidence?: JwsObject;
}

export interface Delegation {
  delegation_id: string;
  principal: PrincipalRef;
  agent: AgentRef;
  granted_at: string;
  expires_at: string;
  purpose: string;
  scope: Scope;
  conditions: Condition[];
  revocable: boolean;
  revocation_endpoint?: string;
  /** Links from the root principal down to this delegation's delegator (empty for a direct grant). */
  delegation_chain: ChainLink[];
  status: DelegationStatus;
  intent_agreement?: IntentAgreement;
  /** standard (default), standing (long-lived) or high (large ceilings); the latter two need approval. */
  privilege?: Privilege;
  approval?: HumanApproval;
  /** Last re-confirmation of a standing or high-privilege grant. */
  reconfirmed_at?: string;
  /** A renewal is a new grant that names the grant it renews. */
  renewal_of?: string;
}
