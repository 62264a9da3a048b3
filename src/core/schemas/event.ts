/**
 * Schema of one agreement event: an entry of the agreement's hash-chained audit trail.
 * `event_hash` is the SHA-256 of the canonical event without `event_hash`; each event after
 * the first names its predecessor in `prev_event_hash` (checked by the agreement engine, not
 * here: a schema sees one event at a time).
 */
import { EVENT_TYPES } from "../agreement/index.js";
import { COMMON_REF, DRAFT_2020_12 } from "./common.js";

/** `$id` of the event schema. */
export const EVENT_ID = "https://writ.dev/schemas/event.json";

/** The agreement event schema. */
export const eventSchema = {
  $schema: DRAFT_2020_12,
  $id: EVENT_ID,
  title: "Agreement event",
  description: "One entry of an intent agreement's hash-chained audit trail.",
  type: "object",
  additionalProperties: false,
  required: ["event_id", "type", "at", "actor", "agreement_id", "mandate_hash", "event_hash"],
  properties: {
    event_id: { $ref: COMMON_REF.identifier, description: "Unique identifier of the event." },
    type: {
      enum: EVENT_TYPES,
      description: "What happened: proposed, clarified, accepted, activated, acknowledged, amended, added, revoked or expired.",
    },
    at: { $ref: COMMON_REF.dateTime, description: "When it happened." },
    actor: { $ref: COMMON_REF.actor, description: "Who made it happen." },
    agreement_id: { $ref: COMMON_REF.identifier, description: "The agreement the event belongs to." },
    mandate_hash: { $ref: COMMON_REF.hash, description: "Hash of the mandate the event concerns." },
    prev_event_hash: {
      $ref: COMMON_REF.hash,
      description: "event_hash of the previous event; absent on the first event.",
    },
    note: { type: "string", description: "Free-text note. Informative only." },
    detail: {
      type: "object",
      description: "Event-specific detail. Open object: its members depend on the event type.",
    },
    event_hash: {
      $ref: COMMON_REF.hash,
      description: "SHA-256 of the canonical (RFC 8785) event with event_hash removed.",
    },
  },
} as const;
