/**
 * Schema of one spend-ledger entry. Entries are hash-chained: `entry_hash` is the SHA-256 of
 * the canonical entry without `entry_hash`, and every entry after the first names its
 * predecessor in `prev_entry_hash` (the chain itself is checked by the ledger code). The hold
 * steps (captured, released, voided, expired, refunded; `final`, `cause`) are the documented
 * extension of docs/formats.md, "Holds, captures and refunds"; the seed's entries stay valid.
 */
import { COMMON_REF, DRAFT_2020_12 } from "./common.js";

/** `$id` of the ledger entry schema. */
export const LEDGER_ENTRY_ID = "https://writ.dev/schemas/ledger-entry.json";

/** The ledger entry schema. */
export const ledgerEntrySchema = {
  $schema: DRAFT_2020_12,
  $id: LEDGER_ENTRY_ID,
  title: "Ledger entry",
  description: "One entry of an agreement's hash-chained spend ledger.",
  type: "object",
  additionalProperties: false,
  required: ["action_id", "at", "currency", "outcome", "sequence", "entry_hash"],
  properties: {
    action_id: { $ref: COMMON_REF.identifier, description: "The evaluated action; unique within the ledger." },
    at: { $ref: COMMON_REF.dateTime, description: "When the entry was recorded." },
    currency: { $ref: COMMON_REF.currency, description: "Currency of amount." },
    outcome: {
      enum: ["allowed", "authorized", "settled", "failed", "captured", "released", "voided", "expired", "refunded"],
      description:
        "State of the spend: allowed (a hold), authorized, settled or failed; or a hold step: captured, released, voided, expired, refunded (amount is then the step's amount).",
    },
    sequence: { $ref: COMMON_REF.sequence, description: "Position in the ledger, starting at 1." },
    entry_hash: {
      $ref: COMMON_REF.hash,
      description: "SHA-256 of the canonical (RFC 8785) entry with entry_hash removed.",
    },
    amount: { $ref: COMMON_REF.amount, description: "Amount spent, in major units of currency." },
    idempotency_key: { type: "string", minLength: 1, description: "Caller's idempotency key for the action." },
    intent_id: { $ref: COMMON_REF.identifier, description: "The mandate (intent) the spend counts against." },
    prev_entry_hash: {
      $ref: COMMON_REF.hash,
      description: "entry_hash of the previous entry; absent on the first entry.",
    },
    final: { const: true, description: "On a captured entry: the capture closes the hold; the rest is released by the next entry." },
    cause: {
      enum: ["capture", "refund"],
      description: "On a released entry: the rest of the hold after a final capture, or a refund that gives budget back.",
    },
  },
} as const;
