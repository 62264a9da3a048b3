/**
 * Schema of the delegation record (spec "Delegation"): who authorized which agent to do what,
 * for how long, under which conditions, through which chain of agents. The spec names this
 * schema normative without printing it; this one follows the spec's field table and the
 * `Delegation` type. Defaults (filled in by the validator): `revocable` true, `conditions` and
 * `delegation_chain` empty.
 *
 * Conditions are a `oneOf` discriminated by `type`, so an error names the one branch that applies.
 */
import { DELEGATION_STATUSES } from "../delegation/index.js";
import { COMMON_REF, DRAFT_2020_12 } from "./common.js";
import { INTENT_AGREEMENT_ID } from "./intent-agreement.js";

/** `$id` of the delegation schema. */
export const DELEGATION_ID = "https://writ.dev/schemas/delegation.json";

/** Absolute `$ref` targets of the delegation's definitions. */
export const DELEGATION_REF = {
  scope: `${DELEGATION_ID}#/$defs/scope`,
  condition: `${DELEGATION_ID}#/$defs/condition`,
  chainLink: `${DELEGATION_ID}#/$defs/chainLink`,
} as const;

const def = (name: string) => `${DELEGATION_ID}#/$defs/${name}`;

/** 24-hour HH:MM. */
const CLOCK_TIME = { type: "string", pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$" } as const;

/** IANA time zone name (checked against the runtime's zone database by the condition code). */
const TIME_ZONE = {
  type: "string",
  minLength: 1,
  maxLength: 64,
  pattern: "^[A-Za-z][A-Za-z0-9_+/-]*$",
  description: "IANA time zone name, for example Europe/Berlin.",
} as const;

const stringList = (what: string, each: string) => ({ type: "array", items: { type: "string", minLength: 1, description: each }, description: what }) as const;

/** The delegation schema. */
export const delegationSchema = {
  $schema: DRAFT_2020_12,
  $id: DELEGATION_ID,
  title: "Delegation",
  description: "An explicit grant of narrow, short-lived authority from a principal to an agent.",
  type: "object",
  additionalProperties: false,
  required: ["delegation_id", "principal", "agent", "granted_at", "expires_at", "purpose", "scope", "status"],
  properties: {
    delegation_id: { $ref: COMMON_REF.identifier, description: "Unique identifier of the delegation." },
    principal: {
      type: "object",
      description: "Who grants the authority.",
      additionalProperties: false,
      required: ["type", "id"],
      properties: {
        type: { $ref: COMMON_REF.principalType, description: "Kind of principal." },
        id: { $ref: COMMON_REF.identifier, description: "Identifier of the principal." },
        public_key: {
          $ref: COMMON_REF.publicJwk,
          description: "When present, mandates bound to this delegation must be signed by this key.",
        },
      },
    },
    agent: {
      type: "object",
      description: "Recipient of the authority. Members other than agent_id and public_key are allowed.",
      additionalProperties: true,
      required: ["agent_id"],
      properties: {
        agent_id: { $ref: COMMON_REF.identifier, description: "Identifier of the agent." },
        public_key: { $ref: COMMON_REF.publicJwk, description: "The agent's public key." },
      },
    },
    granted_at: { $ref: COMMON_REF.dateTime, description: "Issue time." },
    expires_at: { $ref: COMMON_REF.dateTime, description: "Lapse time. Enforced at evaluation time." },
    purpose: { type: "string", description: "Human-readable purpose." },
    scope: { $ref: def("scope"), description: "What the delegation allows." },
    conditions: {
      type: "array",
      default: [],
      items: { $ref: def("condition"), description: "One condition." },
      description: "Conditions that must all hold for an action to be allowed.",
    },
    revocable: { type: "boolean", default: true, description: "Whether the grant can be revoked. Default true." },
    revocation_endpoint: {
      type: "string",
      minLength: 1,
      description: "Where revocation is published or checked.",
    },
    delegation_chain: {
      type: "array",
      default: [],
      items: { $ref: def("chainLink"), description: "One link, root principal first." },
      description: "Links from the root principal down to this delegation's delegator; empty for a direct grant.",
    },
    status: {
      enum: DELEGATION_STATUSES,
      description: "active, suspended, revoked or expired.",
    },
    intent_agreement: { $ref: INTENT_AGREEMENT_ID, description: "The signed intent agreement bound to the grant." },
    privilege: {
      enum: ["standard", "standing", "high"],
      description: "standard (the default), standing (long-lived) or high (large ceilings); the latter two need approval.",
    },
    approval: { $ref: def("approval"), description: "Human approval of a standing or high-privilege grant." },
    reconfirmed_at: {
      $ref: COMMON_REF.dateTime,
      description: "Last re-confirmation of a standing or high-privilege grant.",
    },
    renewal_of: { $ref: COMMON_REF.identifier, description: "delegation_id of the grant this one renews." },
  },
  $defs: {
    scope: {
      type: "object",
      description: "Intents bound, amount ceilings, allowed action verbs and resource constraints.",
      additionalProperties: false,
      required: ["currency"],
      properties: {
        intents: stringList("Bound intents (mandate intent_ids). Empty or absent: every intent of the agreement.", "One bound intent_id."),
        currency: { $ref: COMMON_REF.currency, description: "Currency of the scope's amounts." },
        maximum_amount: { $ref: COMMON_REF.amount, description: "Per-transaction ceiling, in major units." },
        cumulative_maximum: {
          $ref: COMMON_REF.amount,
          description: "Cumulative total across every action under this delegation, in major units.",
        },
        time_zone: { $ref: COMMON_REF.timeZone, description: "IANA time zone of the principal for period_limits. Default UTC." },
        period_limits: {
          $ref: COMMON_REF.periodLimits,
          description: "Limits per period on the spend under this delegation (amount in the scope currency and/or count per window).",
        },
        action_types: stringList("Allowed action verbs (for example purchase, refund). Absent: not restricted.", "One allowed action verb."),
        merchants: stringList("Allowed merchants. Absent: not restricted.", "One allowed merchant."),
        categories: stringList("Allowed categories. Absent: not restricted.", "One allowed category."),
        refunds_restore_budget: {
          type: "boolean",
          description:
            "Whether a refund recorded after a capture may give its amount back to the budgets. A refund restores budget only when the mandate and every delegation the agreement counts under say true. Absent or false: refunds restore nothing (no purchase-and-refund laundering). A child may not say true where its parent does not.",
        },
      },
    },
    condition: {
      type: "object",
      description: "A condition that must hold, discriminated by type.",
      required: ["type"],
      properties: { type: { type: "string", description: "Which condition this is." } },
      discriminator: { propertyName: "type" },
      oneOf: [
        { $ref: def("timeWindow") },
        { $ref: def("maxRiskScore") },
        { $ref: def("merchantAllowlist") },
        { $ref: def("businessHoursOnly") },
        { $ref: def("principalPresent") },
      ],
    },
    timeWindow: {
      type: "object",
      description: "Actions are allowed only between start and end local time; an end before start crosses midnight.",
      additionalProperties: false,
      required: ["type", "start", "end", "timezone"],
      properties: {
        type: { const: "time_window", description: "Condition type: time_window." },
        start: { ...CLOCK_TIME, description: "Start of the window, HH:MM (24-hour) local time." },
        end: { ...CLOCK_TIME, description: "End of the window, HH:MM (24-hour) local time." },
        timezone: TIME_ZONE,
      },
    },
    maxRiskScore: {
      type: "object",
      description: "Actions are allowed only while the risk score is at or below value.",
      additionalProperties: false,
      required: ["type", "value"],
      properties: {
        type: { const: "max_risk_score", description: "Condition type: max_risk_score." },
        value: { type: "number", minimum: 0, maximum: 100, description: "Highest allowed risk score, 0 to 100." },
      },
    },
    merchantAllowlist: {
      type: "object",
      description: "Actions are allowed only at the listed merchants.",
      additionalProperties: false,
      required: ["type", "merchants"],
      properties: {
        type: { const: "merchant_allowlist", description: "Condition type: merchant_allowlist." },
        merchants: {
          type: "array",
          minItems: 1,
          items: { type: "string", minLength: 1, description: "One allowed merchant." },
          description: "The allowed merchants.",
        },
      },
    },
    businessHoursOnly: {
      type: "object",
      description: "Actions are allowed only Monday to Friday, 09:00 to 17:00 in timezone.",
      additionalProperties: false,
      required: ["type", "timezone"],
      properties: {
        type: { const: "business_hours_only", description: "Condition type: business_hours_only." },
        timezone: TIME_ZONE,
      },
    },
    principalPresent: {
      type: "object",
      description:
        "Actions are allowed only while the principal is present or approves them (AP2/Visa human present); optionally only above an amount or for categories.",
      additionalProperties: false,
      required: ["type"],
      properties: {
        type: { const: "principal_present", description: "Condition type: principal_present." },
        above_amount: {
          type: "number",
          minimum: 0,
          description:
            "Only for an action above this amount (major units of currency; another currency always needs the principal). With neither this nor categories: every action.",
        },
        currency: { type: "string", pattern: "^[A-Z]{3}$", description: "Currency of above_amount (required with it)." },
        categories: {
          type: "array",
          minItems: 1,
          items: { type: "string", minLength: 1, description: "A category that needs the principal." },
          description: "Only for an action in one of these categories (an action without a category always needs the principal).",
        },
      },
    },
    chainLink: {
      type: "object",
      description: "One link of an agent-to-agent chain: delegator gave delegate the narrowed scope.",
      additionalProperties: false,
      required: ["delegation_id", "delegator", "delegate", "delegated_at", "expires_at", "scope"],
      properties: {
        delegation_id: { $ref: COMMON_REF.identifier, description: "The delegation this link records." },
        delegator: {
          type: "object",
          description: "Who delegated.",
          additionalProperties: false,
          required: ["type", "id"],
          properties: {
            type: { $ref: COMMON_REF.principalType, description: "Kind of delegator." },
            id: { $ref: COMMON_REF.identifier, description: "Identifier of the delegator." },
          },
        },
        delegate: {
          type: "object",
          description: "Who received the authority.",
          additionalProperties: false,
          required: ["agent_id"],
          properties: {
            agent_id: { $ref: COMMON_REF.identifier, description: "Identifier of the receiving agent." },
          },
        },
        delegated_at: { $ref: COMMON_REF.dateTime, description: "When the link was granted." },
        expires_at: { $ref: COMMON_REF.dateTime, description: "When the link lapses." },
        scope: { $ref: def("scope"), description: "The narrowed scope given to the delegate." },
        conditions: {
          type: "array",
          items: { $ref: def("condition"), description: "One condition of this link." },
          description: "Conditions of this link.",
        },
      },
    },
    approval: {
      type: "object",
      description: "Evidence that a human approved a standing or high-privilege grant.",
      additionalProperties: false,
      required: ["type", "approved_by", "approved_at"],
      properties: {
        type: { const: "HUMAN_APPROVAL", description: "Approval type: HUMAN_APPROVAL." },
        approved_by: { $ref: COMMON_REF.identifier, description: "Who approved." },
        approved_at: { $ref: COMMON_REF.dateTime, description: "When they approved." },
        evidence: { $ref: COMMON_REF.jws, description: "Signed evidence of the approval." },
      },
    },
  },
} as const;
