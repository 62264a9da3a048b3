/**
 * Schema of an agreement revocation: a signed act by the principal who signed the agreement.
 * `mandate_hashes` covers every live mandate hash and is required when the agreement holds more
 * than one intent (that rule lives in the agreement schema, which can see the mandates).
 */
import { COMMON_REF, DRAFT_2020_12 } from "./common.js";

/** `$id` of the agreement revocation schema. */
export const REVOCATION_ID = "https://writ.dev/schemas/revocation.json";

/** The agreement revocation schema. */
export const revocationSchema = {
  $schema: DRAFT_2020_12,
  $id: REVOCATION_ID,
  title: "Agreement revocation",
  description: "A signed revocation of an intent agreement by the principal who signed it.",
  type: "object",
  additionalProperties: false,
  required: ["svc_revocation", "agreement_id", "mandate_hash", "at", "reason", "signature"],
  properties: {
    svc_revocation: { const: 1, description: "Version marker of the revocation format: the constant 1." },
    agreement_id: { $ref: COMMON_REF.identifier, description: "The revoked agreement." },
    mandate_hash: { $ref: COMMON_REF.hash, description: "Hash of the (first) mandate being revoked." },
    at: { $ref: COMMON_REF.dateTime, description: "When the principal revoked." },
    reason: { type: "string", description: "Why the principal revoked." },
    signature: { $ref: COMMON_REF.jws, description: "JWS by the principal's key over the revocation." },
    mandate_hashes: {
      type: "array",
      minItems: 1,
      uniqueItems: true,
      items: { $ref: COMMON_REF.hash, description: "Hash of one revoked live mandate." },
      description: "Every live mandate hash being revoked; present when the agreement holds more than one intent.",
    },
  },
} as const;
