/**
 * Schema of the intent agreement record (spec "Intent agreement"). Closed: additional
 * properties are refused. Two conditional rules:
 *
 * - when `status` is accepted, active or expired, every mandate requires `signature`,
 *   `rendering` and `algorithm`, and its `principal` requires `public_key`;
 * - when the agreement holds more than one mandate, a `revocation` must list every revoked
 *   mandate hash in `mandate_hashes`.
 *
 * A subschema's `$comment` is the plain-words reason the validator appends to its errors.
 */
import { AGREEMENT_STATUSES } from "../agreement/index.js";
import { ACKNOWLEDGEMENT_ID } from "./acknowledgement.js";
import { COMMON_REF, DRAFT_2020_12 } from "./common.js";
import { EVENT_ID } from "./event.js";
import { LEDGER_ENTRY_ID } from "./ledger-entry.js";
import { MANDATE_ID } from "./mandate.js";
import { REVOCATION_ID } from "./revocation.js";

/** `$id` of the intent agreement schema. */
export const INTENT_AGREEMENT_ID = "https://writ.dev/schemas/intent-agreement.json";

/** Statuses under which every mandate must be fully signed. */
export const SIGNED_STATUSES = ["accepted", "active", "expired"] as const;

const SIGNED_REASON = "required when status is accepted, active or expired";

/** Mandate requirements that apply once the agreement is accepted. */
const signedMandatesRule = {
  if: {
    required: ["status"],
    properties: { status: { enum: SIGNED_STATUSES, description: "A status that requires signed mandates." } },
  },
  then: {
    properties: {
      mandates: {
        type: "array",
        description: "Every mandate is signed.",
        items: {
          type: "object",
          $comment: SIGNED_REASON,
          description: "A signed mandate.",
          required: ["signature", "rendering", "algorithm"],
          properties: {
            signature: { description: "Required: the principal's signature." },
            rendering: { description: "Required: what the principal was shown." },
            algorithm: { description: "Required: the signature algorithm." },
            principal: {
              type: "object",
              $comment: SIGNED_REASON,
              description: "The signing principal names its key.",
              required: ["public_key"],
              properties: { public_key: { description: "Required: the principal's public key." } },
            },
          },
        },
      },
    },
  },
} as const;

/** A revocation of a multi-intent agreement names every revoked mandate hash. */
const multiIntentRevocationRule = {
  if: {
    required: ["mandates", "revocation"],
    properties: {
      mandates: { type: "array", minItems: 2, description: "More than one live intent." },
      revocation: { description: "A revocation is present." },
    },
  },
  then: {
    properties: {
      revocation: {
        type: "object",
        $comment: "required when the agreement holds more than one intent",
        description: "The revocation covers every live mandate hash.",
        required: ["mandate_hashes"],
        properties: { mandate_hashes: { description: "Required: every revoked mandate hash." } },
      },
    },
  },
} as const;

/** The intent agreement schema. */
export const intentAgreementSchema = {
  $schema: DRAFT_2020_12,
  $id: INTENT_AGREEMENT_ID,
  title: "Intent agreement",
  description: "A signed intent agreement: live mandates, the spend ledger, acknowledgements, revocation and the event log.",
  type: "object",
  additionalProperties: false,
  required: ["agreement_id", "status", "mandates", "events", "ledger", "ledger_sequence", "ledger_as_of"],
  properties: {
    agreement_id: { $ref: COMMON_REF.identifier, description: "Unique identifier of the agreement." },
    status: {
      enum: AGREEMENT_STATUSES,
      description:
        "proposed, clarifying, accepted, active, revoked or expired. Advisory: evaluators derive authority from the signature, the window, the revocation signature and required acknowledgements.",
    },
    created_at: { $ref: COMMON_REF.dateTime, description: "When the agreement was created." },
    updated_at: { $ref: COMMON_REF.dateTime, description: "When the agreement was last changed." },
    mandates: {
      type: "array",
      minItems: 1,
      items: { $ref: MANDATE_ID, description: "One live intent." },
      description: "Live intents; several allowed; each stays inside parent_limits.",
    },
    parent_limits: {
      type: "object",
      description: "The parent set. A live intent's per-transaction ceiling and cumulative slice, and the sum of slices, must not exceed it.",
      additionalProperties: false,
      required: ["currency"],
      properties: {
        currency: { $ref: COMMON_REF.currency, description: "Currency of the parent amounts." },
        maximum_amount: { $ref: COMMON_REF.amount, description: "Per-transaction ceiling, in major units." },
        cumulative_maximum: {
          $ref: COMMON_REF.amount,
          description: "Total budget across every intent, in major units.",
        },
      },
    },
    ledger: {
      type: "array",
      items: { $ref: LEDGER_ENTRY_ID, description: "One spend." },
      description: "The spend ledger. An empty array means nothing spent.",
    },
    ledger_sequence: {
      $ref: COMMON_REF.count,
      description: "Number of ledger entries. A check carrying a higher sequence means this ledger is truncated.",
    },
    ledger_head: {
      $ref: COMMON_REF.hash,
      description: "entry_hash of the last ledger entry; absent when the ledger is empty.",
    },
    ledger_as_of: {
      $ref: COMMON_REF.dateTime,
      description: "When this replica of the ledger was last synced. Older than the staleness window steps up.",
    },
    mandate_history: {
      type: "array",
      items: { $ref: MANDATE_ID, description: "An earlier version of a mandate." },
      description: "Earlier mandate versions, newest amendment's predecessor last. Not authoritative for a new action.",
    },
    acknowledgements: {
      type: "array",
      items: { $ref: ACKNOWLEDGEMENT_ID, description: "One countersignature." },
      description: "Countersignatures of the current mandate hash; one for an older hash does not count.",
    },
    revocation: { $ref: REVOCATION_ID, description: "The principal's signed revocation, when revoked." },
    events: {
      type: "array",
      items: { $ref: EVENT_ID, description: "One event." },
      description: "The hash-chained audit trail of the agreement.",
    },
  },
  allOf: [signedMandatesRule, multiIntentRevocationRule],
} as const;
