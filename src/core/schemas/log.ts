/**
 * Schemas of the transparency log's wire records: a log entry, a signed tree head and an
 * inclusion proof. Arithmetic relations the schema cannot state (index = sequence - 1,
 * sequence <= tree_size, the proof's shape for that index and size) are checked by the
 * Merkle code; the `side` hints are never trusted for verification.
 */
import { COMMON_REF, DRAFT_2020_12 } from "./common.js";

/** `$id` of the log entry schema. */
export const LOG_ENTRY_ID = "https://writ.dev/schemas/log-entry.json";
/** `$id` of the tree head schema. */
export const TREE_HEAD_ID = "https://writ.dev/schemas/tree-head.json";
/** `$id` of the inclusion proof schema. */
export const INCLUSION_PROOF_ID = "https://writ.dev/schemas/inclusion-proof.json";

/** Kinds of transparency log entry. */
export const LOG_ENTRY_KINDS = ["agreement", "revocation", "registration", "incident"] as const;

/** Longest audit path of a tree of up to 2^64 leaves. */
const MAX_PROOF_LENGTH = 64;

/** The transparency log entry schema. */
export const logEntrySchema = {
  $schema: DRAFT_2020_12,
  $id: LOG_ENTRY_ID,
  title: "Transparency log entry",
  description: "One entry of the append-only transparency log, hash-chained to its predecessor.",
  type: "object",
  additionalProperties: false,
  required: ["kind", "sequence", "body", "entry_hash"],
  properties: {
    kind: { enum: LOG_ENTRY_KINDS, description: "agreement, revocation, registration or incident." },
    sequence: { $ref: COMMON_REF.sequence, description: "Position in the log, starting at 1." },
    body: { type: "object", description: "The logged record. Open object: its members depend on kind." },
    entry_hash: {
      $ref: COMMON_REF.hash,
      description: "SHA-256 of the canonical (RFC 8785) entry with entry_hash removed.",
    },
    prev_entry_hash: {
      $ref: COMMON_REF.hash,
      description: "entry_hash of the previous entry; present on every entry after the first.",
    },
  },
  allOf: [
    {
      if: {
        required: ["sequence"],
        properties: { sequence: { const: 1, description: "The first entry." } },
      },
      then: {
        $comment: "the first entry has no predecessor",
        not: {
          required: ["prev_entry_hash"],
          properties: { prev_entry_hash: { description: "Forbidden on the first entry." } },
        },
      },
    },
    {
      if: {
        required: ["sequence"],
        properties: { sequence: { type: "integer", minimum: 2, description: "An entry after the first." } },
      },
      then: {
        $comment: "required on every entry after the first",
        required: ["prev_entry_hash"],
        properties: { prev_entry_hash: { description: "Required after the first entry." } },
      },
    },
  ],
} as const;

/** The signed tree head schema. */
export const treeHeadSchema = {
  $schema: DRAFT_2020_12,
  $id: TREE_HEAD_ID,
  title: "Signed tree head",
  description: "The log's signed statement of its size and Merkle root (RFC 6962 tree hash).",
  type: "object",
  additionalProperties: false,
  required: ["algorithm", "at", "svc_tree_head", "root", "tree_size", "signature"],
  properties: {
    algorithm: { const: "EdDSA", description: "Signature algorithm: EdDSA." },
    at: { $ref: COMMON_REF.dateTime, description: "When the head was signed." },
    svc_tree_head: { const: 1, description: "Version marker of the tree head format: the constant 1." },
    root: { $ref: COMMON_REF.hash, description: "RFC 6962 Merkle tree hash of the first tree_size entries." },
    tree_size: { $ref: COMMON_REF.count, description: "Number of entries the root covers." },
    signature: {
      $ref: COMMON_REF.jws,
      description: "JWS by the log key; its protected header typ is svc-tree-head+jws.",
    },
  },
} as const;

/** The inclusion proof schema. */
export const inclusionProofSchema = {
  $schema: DRAFT_2020_12,
  $id: INCLUSION_PROOF_ID,
  title: "Inclusion proof",
  description: "RFC 6962 audit path proving that one entry is in the tree of the given size.",
  type: "object",
  additionalProperties: false,
  required: ["sequence", "index", "leaf", "proof", "root", "tree_size"],
  properties: {
    sequence: { $ref: COMMON_REF.sequence, description: "Sequence of the proven entry." },
    index: { $ref: COMMON_REF.count, description: "0-based leaf index: sequence minus 1." },
    leaf: { $ref: COMMON_REF.hash, description: "RFC 6962 leaf hash of the canonical entry." },
    proof: {
      type: "array",
      maxItems: MAX_PROOF_LENGTH,
      description: "Audit path, leaf level first.",
      items: {
        type: "object",
        description: "One sibling hash on the audit path.",
        additionalProperties: false,
        required: ["hash", "side"],
        properties: {
          hash: { $ref: COMMON_REF.hash, description: "The sibling node hash." },
          side: {
            enum: ["left", "right"],
            description: "Side of the sibling: left or right. A hint; verifiers derive it from index and size.",
          },
        },
      },
    },
    root: { $ref: COMMON_REF.hash, description: "Root of the tree the proof leads to." },
    tree_size: { $ref: COMMON_REF.sequence, description: "Size of that tree (at least 1)." },
  },
} as const;
