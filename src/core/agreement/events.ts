/**
 * The agreement's hash-chained event log.
 *
 * Promises: `event_hash` is SHA-256 of JCS(event without `event_hash`), so it covers
 * `prev_event_hash`; the first event has no `prev_event_hash`, each later event names the
 * previous event's `event_hash`. `verifyEventChain` never throws and reports the first
 * problem as a sentence naming the event's index.
 */
import { hashWithout, isHashString } from "../canonical/index.js";
import { EVENT_TYPES, type AgreementEvent } from "./types.js";

/** The fields a caller supplies for a new event; the chain fields are computed. */
export type EventFields = Omit<AgreementEvent, "event_hash" | "prev_event_hash">;

/** Builds the next event after `prev` (or the first event when `prev` is undefined). */
export function buildEvent(prev: AgreementEvent | undefined, fields: EventFields): AgreementEvent {
  // Drop any chain fields smuggled in through `fields`: they are always computed here.
  const { event_hash: _h, prev_event_hash: _p, ...rest } = fields as EventFields & Partial<AgreementEvent>;
  const draft = (prev ? { ...rest, prev_event_hash: prev.event_hash } : rest) as Omit<AgreementEvent, "event_hash">;
  return { ...draft, event_hash: hashWithout(draft as AgreementEvent, "event_hash") };
}

function recomputes(e: AgreementEvent): boolean {
  try {
    return hashWithout(e, "event_hash") === e.event_hash;
  } catch {
    return false;
  }
}

/**
 * First problem of an event log, or undefined when it is intact: each event is an object
 * with a known type and a well-formed mandate_hash, its `event_hash` recomputes, the first has no `prev_event_hash` and each later one names the
 * previous `event_hash`, every `agreement_id` is `agreementId`, and `event_id`s are unique.
 * An empty log is intact (the state machine reports that it has no `proposed` event).
 */
export function verifyEventChain(events: readonly AgreementEvent[], agreementId: string): string | undefined {
  if (!Array.isArray(events)) return "the event log is not an array";
  const ids = new Set<string>();
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (typeof e !== "object" || e === null || Array.isArray(e)) return `event ${i} is not an object`;
    if (typeof e.event_id !== "string" || e.event_id === "") return `event ${i} has no event_id`;
    if (ids.has(e.event_id)) return `event ${i} repeats event_id ${JSON.stringify(e.event_id)}`;
    ids.add(e.event_id);
    if (e.agreement_id !== agreementId) return `event ${i} names another agreement than ${JSON.stringify(agreementId)}`;
    if (!EVENT_TYPES.includes(e.type)) return `event ${i} has an unknown type ${JSON.stringify(e.type)}`;
    if (!isHashString(e.mandate_hash)) return `event ${i} has a malformed mandate_hash`;
    if (!isHashString(e.event_hash) || !recomputes(e)) return `event ${i}'s event_hash does not match its content`;
    if (i === 0) {
      if (e.prev_event_hash !== undefined) return "event 0 has a prev_event_hash although it is the first event";
    } else if (e.prev_event_hash !== events[i - 1]?.event_hash) {
      return `event ${i}'s prev_event_hash does not name event ${i - 1}'s event_hash`;
    }
  }
  return undefined;
}
