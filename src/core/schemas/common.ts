/**
 * Building blocks every other Writ schema references by `$ref`: hash strings, RFC 3339 times,
 * ISO 4217 currency codes, amounts, the flattened JWS object, the Actor, and public JWKs
 * (Ed25519 or P-256 only, never a private `d`). One schema (`common.json`) holding only `$defs`.
 *
 * Every other module refers to these by absolute URI (see `COMMON_REF`), so any `$defs` entry
 * can be lifted out and used on its own once all Writ schemas are registered with a validator.
 */
import { HASH_PATTERN } from "../canonical/index.js";
import { PRINCIPAL_TYPES } from "../agreement/index.js";

/** JSON Schema dialect of every Writ schema. */
export const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";

/** Base URI of every Writ schema `$id`. */
export const SCHEMA_BASE = "https://writ.dev/schemas/";

/** `$id` of the common definitions. */
export const COMMON_ID = "https://writ.dev/schemas/common.json";

/** Largest integer a JSON number carries exactly; bound on every attacker-supplied counter. */
export const MAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** Absolute `$ref` targets of the common definitions. */
export const COMMON_REF = {
  hash: `${COMMON_ID}#/$defs/hash`,
  dateTime: `${COMMON_ID}#/$defs/dateTime`,
  currency: `${COMMON_ID}#/$defs/currency`,
  amount: `${COMMON_ID}#/$defs/amount`,
  identifier: `${COMMON_ID}#/$defs/identifier`,
  count: `${COMMON_ID}#/$defs/count`,
  sequence: `${COMMON_ID}#/$defs/sequence`,
  principalType: `${COMMON_ID}#/$defs/principalType`,
  ackRole: `${COMMON_ID}#/$defs/ackRole`,
  jwsAlg: `${COMMON_ID}#/$defs/jwsAlg`,
  jws: `${COMMON_ID}#/$defs/jws`,
  actor: `${COMMON_ID}#/$defs/actor`,
  publicJwk: `${COMMON_ID}#/$defs/publicJwk`,
  timeZone: `${COMMON_ID}#/$defs/timeZone`,
  periodLimits: `${COMMON_ID}#/$defs/periodLimits`,
  recurrence: `${COMMON_ID}#/$defs/recurrence`,
} as const;

/** Unpadded base64url of exactly 32 bytes (an Ed25519 key or one P-256 coordinate). */
const KEY_COORDINATE = {
  type: "string",
  pattern: "^[A-Za-z0-9_-]{43}$",
} as const;

/** JWK members that may accompany the key material (the same set `parsePublicJwk` accepts). */
const JWK_METADATA = {
  kid: { type: "string", minLength: 1, description: "Key id. Writ's own key ids are `sha256:` plus the hex RFC 7638 thumbprint." },
  use: { type: "string", description: "Intended use of the key (RFC 7517); Writ keys sign, so `sig` when present." },
  key_ops: {
    type: "array",
    items: { type: "string", description: "One permitted key operation (RFC 7517)." },
    description: "Permitted key operations (RFC 7517).",
  },
} as const;

/** The common definitions schema. */
export const commonSchema = {
  $schema: DRAFT_2020_12,
  $id: COMMON_ID,
  title: "Writ common definitions",
  description: "Definitions shared by every Writ schema. Not a record by itself.",
  $defs: {
    hash: {
      type: "string",
      pattern: HASH_PATTERN,
      description: "SHA-256 hash string: `sha256:` followed by 64 lowercase hex characters.",
    },
    dateTime: {
      type: "string",
      format: "date-time",
      description: "RFC 3339 date-time with a time zone offset, for example 2025-01-31T12:00:00Z.",
    },
    currency: {
      type: "string",
      pattern: "^[A-Z]{3}$",
      description: "ISO 4217 currency code: three upper-case letters, for example EUR.",
    },
    amount: {
      type: "number",
      minimum: 0,
      description: "Amount in major units of the accompanying currency (a JSON number, never negative).",
    },
    identifier: {
      type: "string",
      minLength: 1,
      description: "A non-empty identifier.",
    },
    timeZone: {
      type: "string",
      minLength: 1,
      maxLength: 64,
      description: "IANA time zone of the principal (for example Europe/Berlin) in which calendar period limits are counted. Default UTC.",
    },
    periodLimits: {
      type: "array",
      maxItems: 16,
      description:
        "Limits per period: at most an amount and/or a number of payments per calendar day, week (starting Monday, ISO 8601), month, quarter or year in time_zone, in all (total), or per rolling window. Enforced in the spend transaction.",
      items: {
        type: "object",
        additionalProperties: false,
        description: "One period limit: exactly one of period and rolling, and an amount, a count or both.",
        properties: {
          period: {
            enum: ["day", "week", "month", "quarter", "year", "total"],
            description: "A calendar period in time_zone (a week starts Monday, a quarter 1 January, April, July or October), or total (all time).",
          },
          rolling: {
            type: "string",
            pattern: "^P(\\d{1,4}D)?(T(\\d{1,5}H)?(\\d{1,6}M)?)?$",
            description: "A rolling window as an ISO 8601 duration of days, hours or minutes, for example PT24H (the last 24 hours) or P7D.",
          },
          amount: { type: "number", minimum: 0, description: "At most this much in the window, in major units of the currency." },
          count: { type: "integer", minimum: 1, maximum: MAX_SAFE_INTEGER, description: "At most this many payments in the window." },
        },
      },
    },
    recurrence: {
      type: "object",
      additionalProperties: false,
      required: ["frequency"],
      description:
        "A recurring payment: at most one payment per frequency window (a calendar period in time_zone), each at most maximum_amount, between not_before and expires_at, at most occurrences in all.",
      properties: {
        frequency: {
          enum: ["day", "week", "month", "quarter", "year"],
          description: "At most one payment per calendar day, week, month, quarter or year in time_zone.",
        },
        occurrences: { type: "integer", minimum: 1, maximum: MAX_SAFE_INTEGER, description: "At most this many payments in all." },
      },
    },
    count: {
      type: "integer",
      minimum: 0,
      maximum: MAX_SAFE_INTEGER,
      description: "A non-negative integer count.",
    },
    sequence: {
      type: "integer",
      minimum: 1,
      maximum: MAX_SAFE_INTEGER,
      description: "A 1-based sequence number.",
    },
    principalType: {
      enum: PRINCIPAL_TYPES,
      description: "Kind of principal: human, business, institution, system or agent.",
    },
    ackRole: {
      enum: ["agent", "merchant", "psp", "issuer"],
      description: "Role of an acknowledging party: agent, merchant, psp or issuer.",
    },
    jwsAlg: {
      enum: ["EdDSA", "ES256"],
      description: "JWS algorithm: EdDSA (Ed25519 keys) or ES256 (P-256 keys).",
    },
    jws: {
      type: "object",
      description: "Flattened JWS (RFC 7515 JSON serialization) used for every signature.",
      additionalProperties: false,
      required: ["protected", "payload", "signature"],
      properties: {
        protected: {
          type: "string",
          pattern: "^[A-Za-z0-9_-]+$",
          description: "base64url of the protected header (carries alg, kid and typ).",
        },
        payload: {
          type: "string",
          pattern: "^[A-Za-z0-9_-]*$",
          description: "base64url of the signed bytes.",
        },
        signature: {
          type: "string",
          pattern: "^[A-Za-z0-9_-]+$",
          description: "base64url of the signature over protected.payload.",
        },
      },
    },
    actor: {
      type: "object",
      description: "Who did something: a role and an identifier.",
      additionalProperties: false,
      required: ["role", "id"],
      properties: {
        role: {
          enum: ["principal", "agent", "merchant", "psp", "issuer", "policy"],
          description: "Role of the actor: principal, agent, merchant, psp, issuer or policy.",
        },
        id: { type: "string", minLength: 1, description: "Identifier of the actor in that role." },
      },
    },
    publicJwk: {
      type: "object",
      description: "Public JWK: Ed25519 (kty OKP) or P-256 (kty EC). A key carrying the private member `d` is refused.",
      required: ["kty"],
      properties: {
        kty: { enum: ["OKP", "EC"], description: "Key type: OKP (Ed25519) or EC (P-256)." },
      },
      not: {
        required: ["d"],
        properties: { d: { description: "Private key member: never allowed in a public key." } },
      },
      discriminator: { propertyName: "kty" },
      oneOf: [{ $ref: `${COMMON_ID}#/$defs/okpJwk` }, { $ref: `${COMMON_ID}#/$defs/ecJwk` }],
    },
    okpJwk: {
      type: "object",
      description: "Ed25519 public JWK (RFC 8037).",
      additionalProperties: false,
      required: ["kty", "crv", "x"],
      properties: {
        kty: { const: "OKP", description: "Key type: OKP." },
        crv: { const: "Ed25519", description: "Curve: Ed25519." },
        x: { ...KEY_COORDINATE, description: "The 32-byte public key, unpadded base64url." },
        alg: { const: "EdDSA", description: "Algorithm the key signs with: EdDSA." },
        ...JWK_METADATA,
      },
    },
    ecJwk: {
      type: "object",
      description: "P-256 public JWK (RFC 7518).",
      additionalProperties: false,
      required: ["kty", "crv", "x", "y"],
      properties: {
        kty: { const: "EC", description: "Key type: EC." },
        crv: { const: "P-256", description: "Curve: P-256." },
        x: { ...KEY_COORDINATE, description: "The 32-byte x coordinate, unpadded base64url." },
        y: { ...KEY_COORDINATE, description: "The 32-byte y coordinate, unpadded base64url." },
        alg: { const: "ES256", description: "Algorithm the key signs with: ES256." },
        ...JWK_METADATA,
      },
    },
  },
} as const;
