/**
 * The one closed union of reason codes. Each code is at once the API's reason, the CR status
 * condition's reason and the `reason` label of the verdict metric. Every code has exactly one
 * verdict; the decision's verdict is the most severe of its reasons (DENY over STEP_UP over
 * ALLOW). `revoke: true` codes make the service's own decision REVOKE.
 */

export type Verdict = "ALLOW" | "DENY" | "STEP_UP";
export type SvcDecision = "ALLOW" | "BLOCK" | "STEP_UP" | "REVOKE";
export type RequiredAction =
  | "NONE"
  | "PRINCIPAL_CONFIRMATION"
  | "REFRESH_LEDGER"
  | "COLLECT_ACKNOWLEDGEMENT"
  | "CONVERT_CURRENCY"
  | "SELECT_AGREEMENT"
  | "NEW_GRANT"
  | "REVOKE_DELEGATION"
  | "RETRY_LATER";

export interface ReasonInfo {
  readonly verdict: Exclude<Verdict, "ALLOW">;
  readonly requiredAction: RequiredAction;
  /** What the code means. */
  readonly means: string;
  /** What clears it. */
  readonly clears: string;
  readonly revoke?: true;
  /**
   * True for a DENY that says the agent tried an action its grant forbids (a ceiling, a
   * budget, a merchant, a category, an action verb, a time window, the intent's constraints):
   * what DENIED_ATTEMPT_BURST counts. Malformed input, refusals caused by the state of records
   * (revoked, expired, not selected, broken) and refusals of the spend transaction do not
   * count (docs/verify.md, "Which refusals count toward the burst").
   */
  readonly attempt?: true;
}

export const REASONS = {
  // Registry (verify path)
  AGENT_NOT_ACTIVE: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "the agent is not active in the registry",
    clears: "the operator reactivates the agent",
  },
  NO_ACTIVE_AGREEMENT: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "the agent has no active stored agreement",
    clears: "a principal signs and activates an agreement for the agent",
  },
  AGREEMENT_NOT_SELECTED: {
    verdict: "DENY",
    requiredAction: "SELECT_AGREEMENT",
    means: "several agreements could apply and the request names none",
    clears: "send agreement_id (or intent_id) with the action",
  },
  // Amounts and budgets
  AMOUNT_ABOVE_INTENT_CEILING: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the amount is above the intent's per-transaction ceiling",
    clears: "a smaller amount, or an amended mandate with a higher ceiling",
  },
  AMOUNT_ABOVE_DELEGATION_CEILING: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the amount is above the delegation scope's maximum_amount",
    clears: "a smaller amount, or a new grant with a higher ceiling",
  },
  AMOUNT_INVALID: {
    verdict: "DENY",
    requiredAction: "NONE",
    means: "the amount is negative, not finite, or has more decimals than the currency allows",
    clears: "send an amount valid in its currency",
  },
  CUMULATIVE_BUDGET_EXCEEDED: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the action would take the intent's cumulative slice or the parent budget past its limit",
    clears: "a smaller amount, a released (failed) spend, or an amended mandate",
  },
  DELEGATION_BUDGET_EXCEEDED: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the action would take the delegation's cumulative_maximum past its limit",
    clears: "a smaller amount or a new grant",
  },
  PERIOD_LIMIT_EXCEEDED: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means:
      "the action would take an amount limit per period (a calendar day, week, month or year in the principal's time zone, or a rolling window) of the intent or the delegation past its limit, or the period limits are not usable",
    clears: "a smaller amount, the window's reset (resets_at in the budget), a released (failed) spend, or an amended mandate or grant",
  },
  PERIOD_COUNT_EXCEEDED: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the action would be one payment more than a count limit per period (or a recurring mandate's one per frequency window, or its occurrences) allows",
    clears: "the window's reset (resets_at in the budget), a released (failed) spend, or an amended mandate or grant",
  },
  PARENT_LIMITS_EXCEEDED: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "the agreement's intents do not fit inside parent_limits (a ceiling, a slice or the sum of slices)",
    clears: "an amended agreement whose intents fit parent_limits",
  },
  CURRENCY_MISMATCH: {
    verdict: "STEP_UP",
    requiredAction: "CONVERT_CURRENCY",
    means: "the action's currency differs from the intent's and no rate for the day is known",
    clears: "pay in the intent's currency, or a rate for the day becomes available",
  },
  // Intent shape and selection
  OVER_BROAD_INTENT: {
    verdict: "STEP_UP",
    requiredAction: "PRINCIPAL_CONFIRMATION",
    means: "the intent has no expiry or no per-transaction ceiling",
    clears: "the principal confirms, or signs an intent with an expiry and a ceiling",
  },
  INTENT_NOT_FOUND: {
    verdict: "DENY",
    requiredAction: "NONE",
    means: "the action names an intent_id that is not a live mandate of the agreement",
    clears: "name a live intent",
  },
  INTENT_NOT_BOUND: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "the intent is not among the delegation's bound intents",
    clears: "a delegation that binds the intent",
  },
  INTENT_EXPIRED: { verdict: "DENY", requiredAction: "NEW_GRANT", means: "the intent's expires_at has passed", clears: "a renewed (new) intent" },
  INTENT_NOT_YET_VALID: { verdict: "DENY", requiredAction: "NONE", means: "the intent's not_before is in the future", clears: "wait until not_before" },
  INTENT_DRIFT: {
    verdict: "STEP_UP",
    requiredAction: "PRINCIPAL_CONFIRMATION",
    means: "the action departs from one structured constraint the intent declares (category, merchant or item)",
    clears: "the principal confirms, or the action matches the intent",
  },
  INTENT_MISMATCH: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the action departs from two or more structured constraints the intent declares",
    clears: "an action that matches the intent",
  },
  // Delegation
  DELEGATION_EXPIRED: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "the delegation's expires_at has passed (checked at evaluation time)",
    clears: "a renewal: a new grant",
  },
  DELEGATION_NOT_YET_VALID: { verdict: "DENY", requiredAction: "NONE", means: "the delegation's granted_at is in the future", clears: "wait until granted_at" },
  DELEGATION_REVOKED: { verdict: "DENY", requiredAction: "NEW_GRANT", means: "the delegation is revoked", clears: "a new grant" },
  DELEGATION_SUSPENDED: {
    verdict: "DENY",
    requiredAction: "PRINCIPAL_CONFIRMATION",
    means: "the delegation is suspended",
    clears: "the principal re-grants or lifts the suspension",
  },
  ACTION_NOT_ALLOWED: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the action verb is not in the scope's (or intent's) action_types",
    clears: "an allowed action verb",
  },
  AGENT_MISMATCH: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the acting agent is not the delegate of the delegation or the agent of the mandate",
    clears: "act as the delegated agent",
  },
  MERCHANT_NOT_IN_SCOPE: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the merchant is outside the delegation scope's merchants",
    clears: "a merchant within scope",
  },
  CATEGORY_NOT_IN_SCOPE: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the category is outside the delegation scope's categories",
    clears: "a category within scope",
  },
  HUMAN_APPROVAL_MISSING: {
    verdict: "STEP_UP",
    requiredAction: "PRINCIPAL_CONFIRMATION",
    means: "a standing or high-privilege delegation carries no HUMAN_APPROVAL evidence",
    clears: "a grant with HUMAN_APPROVAL evidence",
  },
  RECONFIRMATION_OVERDUE: {
    verdict: "STEP_UP",
    requiredAction: "PRINCIPAL_CONFIRMATION",
    means: "a standing or high-privilege delegation was not re-confirmed within the re-confirmation period",
    clears: "the principal re-confirms (reconfirmed_at)",
  },
  // Chain
  CHAIN_BROKEN: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "the delegation chain does not connect the root principal to this delegation",
    clears: "a chain whose links connect",
  },
  CHAIN_SCOPE_WIDENED: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "a link of the chain (or this delegation) widens its parent's scope",
    clears: "links that only narrow",
  },
  CHAIN_LINK_REVOKED: { verdict: "DENY", requiredAction: "NEW_GRANT", means: "a delegation above this one in the chain is revoked", clears: "a new chain" },
  CHAIN_LINK_EXPIRED: { verdict: "DENY", requiredAction: "NEW_GRANT", means: "a link above this one in the chain has expired", clears: "a renewed chain" },
  // Conditions
  OUTSIDE_TIME_WINDOW: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the action falls outside a time_window condition",
    clears: "act inside the window",
  },
  OUTSIDE_BUSINESS_HOURS: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "business_hours_only holds and it is not Monday to Friday 09:00-17:00 in the zone",
    clears: "act during business hours",
  },
  CONDITION_INVALID: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "a condition of the delegation is malformed or of an unknown type, so it cannot be evaluated",
    clears: "a grant whose conditions are well-formed",
  },
  RISK_SCORE_ABOVE_LIMIT: {
    verdict: "STEP_UP",
    requiredAction: "PRINCIPAL_CONFIRMATION",
    means: "the risk score is above a max_risk_score condition",
    clears: "a lower risk score or the principal's confirmation",
  },
  RISK_SCORE_UNKNOWN: {
    verdict: "STEP_UP",
    requiredAction: "PRINCIPAL_CONFIRMATION",
    means: "a max_risk_score condition holds but no risk score was supplied",
    clears: "supply a risk score",
  },
  MERCHANT_NOT_ALLOWED: {
    verdict: "DENY",
    attempt: true,
    requiredAction: "NONE",
    means: "the merchant is not on a merchant_allowlist condition",
    clears: "an allowed merchant",
  },
  PRINCIPAL_NOT_PRESENT: {
    verdict: "STEP_UP",
    requiredAction: "PRINCIPAL_CONFIRMATION",
    means: "a principal_present condition holds and the principal is not present",
    clears: "the principal is present",
  },
  // Ledger
  LEDGER_STALE: {
    verdict: "STEP_UP",
    requiredAction: "REFRESH_LEDGER",
    means: "ledger_as_of is older than the staleness window (default 60 s)",
    clears: "a ledger synced within the window",
  },
  LEDGER_TRUNCATED: {
    verdict: "DENY",
    requiredAction: "REFRESH_LEDGER",
    means: "the check carries a higher ledger sequence than the ledger holds",
    clears: "the full ledger",
  },
  LEDGER_TOTAL_UNKNOWN: {
    verdict: "STEP_UP",
    requiredAction: "REFRESH_LEDGER",
    means: "the ledger is omitted, so the cumulative total is unknown",
    clears: "a record that carries its ledger",
  },
  LEDGER_CHAIN_BROKEN: {
    verdict: "DENY",
    requiredAction: "REFRESH_LEDGER",
    means: "a ledger entry's hash, previous hash, sequence, currency, ledger_sequence or ledger_head does not check",
    clears: "an intact ledger",
  },
  // Agreement integrity
  EVENT_CHAIN_BROKEN: { verdict: "DENY", requiredAction: "NEW_GRANT", means: "an event's hash or previous hash does not check", clears: "an intact event log" },
  MANDATE_UNSIGNED: {
    verdict: "DENY",
    requiredAction: "PRINCIPAL_CONFIRMATION",
    means: "the mandate carries no principal signature",
    clears: "the principal signs the mandate",
  },
  SIGNATURE_INVALID: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "the mandate's signature does not verify over its canonical bytes",
    clears: "a correctly signed mandate",
  },
  PRINCIPAL_KEY_MISMATCH: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "the mandate is signed by a key other than the delegation principal's",
    clears: "a mandate signed by the delegating principal",
  },
  AGREEMENT_REVOKED: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "the agreement carries a verified revocation (or the revocation index lists it)",
    clears: "a new agreement",
  },
  REVOCATION_UNVERIFIED: {
    verdict: "STEP_UP",
    requiredAction: "PRINCIPAL_CONFIRMATION",
    means: "the agreement carries a revocation whose signature does not verify or does not cover every live mandate",
    clears: "the principal confirms, or the record is corrected",
  },
  ACKNOWLEDGEMENT_MISSING: {
    verdict: "STEP_UP",
    requiredAction: "COLLECT_ACKNOWLEDGEMENT",
    means: "a required acknowledgement of the current mandate hash is absent or does not verify",
    clears: "the role countersigns the current mandate hash",
  },
  ACKNOWLEDGEMENT_OUTDATED: {
    verdict: "STEP_UP",
    requiredAction: "COLLECT_ACKNOWLEDGEMENT",
    means: "a required role acknowledged only an older mandate hash",
    clears: "the role countersigns the current mandate hash",
  },
  // The service's own REVOKE decisions
  RISK_REVOKE_THRESHOLD: {
    verdict: "DENY",
    requiredAction: "REVOKE_DELEGATION",
    revoke: true,
    means: "the risk score reached the revoke threshold (default 90)",
    clears: "nothing: the delegation is revoked; a new grant is needed",
  },
  DENIED_ATTEMPT_BURST: {
    verdict: "DENY",
    requiredAction: "REVOKE_DELEGATION",
    revoke: true,
    means: "the agent had too many denied attempts in the burst window (default 5 in 60 s)",
    clears: "nothing: the delegation is revoked; a new grant is needed",
  },
  // Declarations (controller)
  SPEC_INVALID: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means: "a declared resource does not validate against its schema, so it is not stored",
    clears: "a corrected manifest",
  },
  ACKNOWLEDGEMENT_KEY_UNREGISTERED: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means:
      "a declared agreement carries an acknowledgement that names a registry organization (role merchant, psp or issuer; id an org_ id) but is not signed by a live key that organization registered (POST /v1/orgs/{org_id}/ack-keys), so it is not stored",
    clears: "the organization registers its acknowledgement key and countersigns with it, or the acknowledgement is removed",
  },
  NAMESPACE_NOT_BOUND: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means:
      "a declared resource's namespace is not bound to the registry organization it needs (no valid writ.dev/org-id label, an unknown or inactive organization, an agent or record of another organization), so it is not stored",
    clears: "label the namespace with its active organization's org_id and declare only that organization's agents and records",
  },
  RECORD_NOT_OWNED: {
    verdict: "DENY",
    requiredAction: "NEW_GRANT",
    means:
      "a declared resource names a record that another resource created (a record is stored, changed and revoked only through the resource that created it), so nothing is stored or revoked through it",
    clears: "declare a new record id in a resource of its own, or change the record through the resource that created it",
  },
  // Signed agent requests (RFC 9421, Web Bot Auth: POST /v1/agents/verify-request and writ/client's verifyAgentRequest)
  REQUEST_SIGNATURE_MISSING: {
    verdict: "DENY",
    requiredAction: "NONE",
    means: "the request carries no Signature and Signature-Input fields, or no signature tagged web-bot-auth",
    clears: "the agent signs the request (writ/client signAgentRequest, writ request sign)",
  },
  REQUEST_SIGNATURE_MALFORMED: {
    verdict: "DENY",
    requiredAction: "NONE",
    means:
      "the request signature lacks created, expires, keyid or nonce, does not cover @authority (or the Signature-Agent field the request carries), lives longer than 300 s, was created in the future, or names another algorithm than its key's",
    clears: "a signature made as docs/reference/request-signatures.md says",
  },
  REQUEST_SIGNATURE_EXPIRED: {
    verdict: "DENY",
    requiredAction: "NONE",
    means: "the request signature's expires has passed (30 s of clock skew allowed)",
    clears: "a freshly signed request",
  },
  REQUEST_KEY_UNKNOWN: {
    verdict: "DENY",
    requiredAction: "NONE",
    means: "the signature's keyid is not the key of a registered agent (or, offline, of an agent in the key directory)",
    clears: "sign with the key the agent is registered with",
  },
  REQUEST_SIGNATURE_INVALID: {
    verdict: "DENY",
    requiredAction: "NONE",
    means: "the request signature does not verify over its covered components with the keyid's key (a component was changed, or another key signed)",
    clears: "the request as the agent signed it",
  },
  REQUEST_NONCE_REPLAYED: {
    verdict: "DENY",
    requiredAction: "NONE",
    means: "the signature's nonce was already seen for its key while the signature lives: the request is a replay",
    clears: "a new request with a new signature",
  },
  KEY_DIRECTORY_INVALID: {
    verdict: "DENY",
    requiredAction: "RETRY_LATER",
    means:
      "the key directory's response signature (by Writ's log key) or its Content-Digest does not verify, its signature expired, or its body is not a JWKS of agent keys",
    clears: "fetch the directory again from Writ",
  },
  // Approvals of a STEP_UP (src/verify/approvals.ts, docs/reference/approvals.md)
  APPROVAL_DECLINED: {
    verdict: "DENY",
    requiredAction: "NONE",
    means: "the principal declined the approval of this request",
    clears: "nothing for this action: a new action with a new action_id",
  },
  APPROVAL_EXPIRED: {
    verdict: "DENY",
    requiredAction: "NONE",
    means: "the approval of this request expired before the principal approved it (WRIT_APPROVAL_TTL_SECONDS)",
    clears: "nothing for this action: a new action with a new action_id",
  },
  // Infrastructure (fail closed)
  REVOCATION_STATE_STALE: {
    verdict: "STEP_UP",
    requiredAction: "RETRY_LATER",
    means: "the revocation watch has been down longer than its bound, so revocation state may be stale",
    clears: "the watch reconnects",
  },
} as const satisfies Record<string, ReasonInfo>;

/** The closed union of reason codes. */
export type ReasonCode = keyof typeof REASONS;
export const REASON_CODES = Object.keys(REASONS) as ReasonCode[];

export function isReasonCode(s: string): s is ReasonCode {
  return Object.prototype.hasOwnProperty.call(REASONS, s);
}

/** One fired reason with an explanation specific to this evaluation. */
export interface Finding {
  code: ReasonCode;
  message: string;
}

/** True when a DENY with `reasons` counts toward DENIED_ATTEMPT_BURST (some reason is an `attempt`). */
export function countsAsAttempt(reasons: readonly ReasonCode[]): boolean {
  return reasons.some((r) => (REASONS[r] as ReasonInfo).attempt === true);
}

/** Maps a verdict to the service decision: DENY is BLOCK. */
export function decisionFor(verdict: Verdict, revoke: boolean): SvcDecision {
  if (revoke) return "REVOKE";
  return verdict === "DENY" ? "BLOCK" : verdict;
}
