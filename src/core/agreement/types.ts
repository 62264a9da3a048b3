/**
 * The intent agreement record, field for field as the spec defines it. Amounts are JSON
 * numbers in major units on the wire and are converted to integer minor units (see
 * `core/money`) before any arithmetic.
 */
import type { HashString } from "../canonical/index.js";
import type { JwsObject, PublicJwk, JwsAlg } from "../jose/index.js";

export type AgreementStatus = "proposed" | "clarifying" | "accepted" | "active" | "revoked" | "expired";
export const AGREEMENT_STATUSES: readonly AgreementStatus[] = ["proposed", "clarifying", "accepted", "active", "revoked", "expired"];

export type PrincipalType = "human" | "business" | "institution" | "system" | "agent";
export const PRINCIPAL_TYPES: readonly PrincipalType[] = ["human", "business", "institution", "system", "agent"];

export type ActorRole = "principal" | "agent" | "merchant" | "psp" | "issuer" | "policy";
export interface Actor {
  role: ActorRole;
  id: string;
}

export type EventType = "proposed" | "clarified" | "accepted" | "activated" | "acknowledged" | "amended" | "added" | "revoked" | "expired";
export const EVENT_TYPES: readonly EventType[] = ["proposed", "clarified", "accepted", "activated", "acknowledged", "amended", "added", "revoked", "expired"];

/** One entry of the agreement's hash-chained audit trail. */
export interface AgreementEvent {
  event_id: string;
  type: EventType;
  at: string;
  actor: Actor;
  agreement_id: string;
  mandate_hash: HashString;
  prev_event_hash?: HashString;
  note?: string;
  detail?: Record<string, unknown>;
  event_hash: HashString;
}

export type AckRole = "agent" | "merchant" | "psp" | "issuer";

/** A countersignature of the current mandate hash. */
export interface Acknowledgement {
  svc_ack: 1;
  agreement_id: string;
  mandate_hash: HashString;
  role: AckRole;
  id: string;
  at: string;
  public_key: PublicJwk;
  signature: JwsObject;
  domain?: string;
}

/**
 * The outcome of a ledger entry: the seed's allowed, authorized, settled and failed, and the
 * hold steps of ./holds.ts (captured, released, voided, expired, refunded; docs/formats.md).
 */
export type LedgerOutcome = "allowed" | "authorized" | "settled" | "failed" | "captured" | "released" | "voided" | "expired" | "refunded";

/** One entry of the hash-chained spend ledger. `amount` is in major units of `currency`. */
export interface LedgerEntry {
  action_id: string;
  at: string;
  currency: string;
  outcome: LedgerOutcome;
  sequence: number;
  entry_hash: HashString;
  amount?: number;
  idempotency_key?: string;
  intent_id?: string;
  prev_entry_hash?: HashString;
  /** On a `captured` entry: the capture closes the hold (the rest is released by the next entry). */
  final?: true;
  /** On a `released` entry: what released it (the rest of a final capture, or a refund that restores budget). */
  cause?: "capture" | "refund";
}

/** A signed revocation of the agreement by the principal who signed it. */
export interface AgreementRevocation {
  svc_revocation: 1;
  agreement_id: string;
  mandate_hash: HashString;
  at: string;
  reason: string;
  signature: JwsObject;
  mandate_hashes?: HashString[];
}

import type { PeriodLimit, Recurrence } from "../money/index.js";

/**
 * A mandate: one live intent. The spec leaves its fields open; Writ's are documented in
 * docs/formats.md. `signature` is a flattened JWS by `principal.public_key` whose payload is
 * the canonical mandate without `signature`; its hash is the mandate hash.
 */
export interface Mandate {
  intent_id: string;
  principal: { type: PrincipalType; id: string; public_key?: PublicJwk };
  agent: { agent_id: string; public_key?: PublicJwk };
  purpose?: string;
  /** Free text from the principal. Informative only: never blocks by itself. */
  natural_language?: string;
  currency: string;
  /** Per-transaction ceiling in major units. */
  maximum_amount?: number;
  /** This intent's cumulative slice of the parent budget, in major units. */
  cumulative_maximum?: number;
  /** IANA time zone of the principal for `period_limits` and `recurrence` (default UTC). */
  time_zone?: string;
  /** Limits per period (src/core/money/periods.ts). */
  period_limits?: PeriodLimit[];
  /** A recurring mandate: one payment per frequency window, at most `occurrences` (src/core/money/periods.ts). */
  recurrence?: Recurrence;
  categories?: string[];
  merchants?: string[];
  items?: string[];
  action_types?: string[];
  /**
   * Whether a refund recorded after a capture gives its amount back to the budgets (default
   * false: a refund restores nothing, so a purchase-and-refund cannot launder a budget).
   */
  refunds_restore_budget?: boolean;
  not_before?: string;
  expires_at?: string;
  /** Roles whose acknowledgement of the current mandate hash is required before spending. */
  required_acknowledgements?: AckRole[];
  /** What the principal was shown when signing (text). */
  rendering?: string;
  algorithm?: JwsAlg;
  signature?: JwsObject;
}

/** The parent set every live intent must stay inside (amounts in major units of currency). */
export interface ParentLimits {
  currency: string;
  maximum_amount?: number;
  cumulative_maximum?: number;
}

export interface IntentAgreement {
  agreement_id: string;
  status: AgreementStatus;
  created_at?: string;
  updated_at?: string;
  mandates: Mandate[];
  parent_limits?: ParentLimits;
  /** Required by the schema; the engine still accepts a replica without it (total unknown). */
  ledger?: LedgerEntry[];
  ledger_sequence: number;
  ledger_head?: HashString;
  ledger_as_of: string;
  mandate_history?: Mandate[];
  acknowledgements?: Acknowledgement[];
  revocation?: AgreementRevocation;
  events: AgreementEvent[];
}
