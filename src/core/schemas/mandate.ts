/**
 * Schema of a mandate: one live intent of an intent agreement, signed by its principal. The
 * spec leaves a mandate's fields open; these are Writ's (see the `Mandate` type). The mandate
 * hash is the SHA-256 of the canonical mandate without `signature`, and `signature` is a
 * flattened JWS by `principal.public_key` over exactly those bytes.
 *
 * Whether `signature`, `rendering`, `algorithm` and `principal.public_key` are required depends
 * on the agreement's status, so that rule lives in the agreement schema.
 */
import { COMMON_REF, DRAFT_2020_12 } from "./common.js";

/** `$id` of the mandate schema. */
export const MANDATE_ID = "https://writ.dev/schemas/mandate.json";

/** A list of non-empty strings (merchants, categories, items, action verbs). */
function stringList(what: string, each: string) {
  return {
    type: "array",
    items: { type: "string", minLength: 1, description: each },
    description: what,
  } as const;
}

/** The mandate schema. */
export const mandateSchema = {
  $schema: DRAFT_2020_12,
  $id: MANDATE_ID,
  title: "Mandate",
  description: "One live intent of an intent agreement: what the principal allows the agent to buy.",
  type: "object",
  additionalProperties: false,
  required: ["intent_id", "principal", "agent", "currency"],
  properties: {
    intent_id: { $ref: COMMON_REF.identifier, description: "Identifier of the intent, unique within the agreement." },
    principal: {
      type: "object",
      description: "The principal who grants the intent and signs the mandate.",
      additionalProperties: false,
      required: ["type", "id"],
      properties: {
        type: { $ref: COMMON_REF.principalType, description: "Kind of principal." },
        id: { $ref: COMMON_REF.identifier, description: "Identifier of the principal." },
        public_key: { $ref: COMMON_REF.publicJwk, description: "Public key that signs the mandate." },
      },
    },
    agent: {
      type: "object",
      description: "The agent the intent is for.",
      additionalProperties: false,
      required: ["agent_id"],
      properties: {
        agent_id: { $ref: COMMON_REF.identifier, description: "Identifier of the agent." },
        public_key: { $ref: COMMON_REF.publicJwk, description: "The agent's public key." },
      },
    },
    purpose: { type: "string", description: "Human-readable purpose of the intent." },
    natural_language: {
      type: "string",
      description: "Free text from the principal. Informative only: never blocks by itself.",
    },
    currency: { $ref: COMMON_REF.currency, description: "Currency of the amounts of this mandate." },
    maximum_amount: { $ref: COMMON_REF.amount, description: "Per-transaction ceiling, in major units." },
    cumulative_maximum: {
      $ref: COMMON_REF.amount,
      description: "This intent's cumulative slice of the parent budget, in major units.",
    },
    time_zone: { $ref: COMMON_REF.timeZone, description: "IANA time zone of the principal for period_limits and recurrence. Default UTC." },
    period_limits: { $ref: COMMON_REF.periodLimits, description: "Limits per period on this intent (amount and/or count per window)." },
    recurrence: { $ref: COMMON_REF.recurrence, description: "Makes the intent a recurring mandate: one payment per frequency window, at most occurrences." },
    categories: stringList("Allowed merchant categories. Absent: not restricted.", "One allowed category."),
    merchants: stringList("Allowed merchants. Absent: not restricted.", "One allowed merchant."),
    items: stringList("Allowed items. Absent: not restricted.", "One allowed item."),
    action_types: stringList("Allowed action verbs (for example purchase, refund). Absent: not restricted.", "One allowed action verb."),
    refunds_restore_budget: {
      type: "boolean",
      description:
        "Whether a refund recorded after a capture gives its amount back to this intent's budgets. Absent or false: refunds restore nothing, so an agent cannot launder a budget through purchase and refund.",
    },
    not_before: { $ref: COMMON_REF.dateTime, description: "The intent is not valid before this time." },
    expires_at: { $ref: COMMON_REF.dateTime, description: "The intent lapses at this time." },
    required_acknowledgements: {
      type: "array",
      uniqueItems: true,
      items: { $ref: COMMON_REF.ackRole, description: "A role whose acknowledgement is required." },
      description: "Roles whose acknowledgement of the current mandate hash is required before spending.",
    },
    rendering: { type: "string", description: "What the principal was shown when signing (text)." },
    algorithm: { $ref: COMMON_REF.jwsAlg, description: "Algorithm of signature." },
    signature: {
      $ref: COMMON_REF.jws,
      description: "Flattened JWS by principal.public_key over the canonical mandate without signature.",
    },
  },
} as const;
