/**
 * Schema of an acknowledgement: a countersignature (agent, merchant, psp or issuer) of the
 * current mandate hash. An acknowledgement of an older hash is well-formed but does not count;
 * that is decided by the agreement engine.
 */
import { COMMON_REF, DRAFT_2020_12 } from "./common.js";

/** `$id` of the acknowledgement schema. */
export const ACKNOWLEDGEMENT_ID = "https://writ.dev/schemas/acknowledgement.json";

/** The acknowledgement schema. */
export const acknowledgementSchema = {
  $schema: DRAFT_2020_12,
  $id: ACKNOWLEDGEMENT_ID,
  title: "Acknowledgement",
  description: "A countersignature of the current mandate hash by an agent, merchant, psp or issuer.",
  type: "object",
  additionalProperties: false,
  required: ["svc_ack", "agreement_id", "mandate_hash", "role", "id", "at", "public_key", "signature"],
  properties: {
    svc_ack: { const: 1, description: "Version marker of the acknowledgement format: the constant 1." },
    agreement_id: { $ref: COMMON_REF.identifier, description: "The acknowledged agreement." },
    mandate_hash: { $ref: COMMON_REF.hash, description: "The mandate hash being acknowledged." },
    role: { $ref: COMMON_REF.ackRole, description: "Role of the acknowledging party." },
    id: { $ref: COMMON_REF.identifier, description: "Identifier of the acknowledging party." },
    at: { $ref: COMMON_REF.dateTime, description: "When the acknowledgement was made." },
    public_key: { $ref: COMMON_REF.publicJwk, description: "Public key the signature verifies with." },
    signature: { $ref: COMMON_REF.jws, description: "JWS by public_key over the acknowledged content." },
    domain: {
      type: "string",
      minLength: 1,
      description: "Domain that publishes the institution key at /.well-known/svc-keys.json.",
    },
  },
} as const;
