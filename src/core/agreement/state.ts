/**
 * The agreement state machine, driven by the types of its events. Status is advisory:
 * authority comes from signatures, windows, the revocation signature and acknowledgements,
 * never from `status`. This module only says which event sequences are coherent.
 *
 * | from                | event        | to                                   |
 * |---------------------|--------------|--------------------------------------|
 * | (start)             | proposed     | proposed (and only as the first event) |
 * | proposed            | clarified    | clarifying                           |
 * | clarifying          | clarified    | clarifying                           |
 * | proposed/clarifying | accepted     | accepted                             |
 * | accepted            | activated    | active                               |
 * | accepted/active     | acknowledged | unchanged                            |
 * | accepted/active     | amended      | unchanged (the new mandate is signed) |
 * | accepted/active     | added        | unchanged (the new mandate is signed) |
 * | any non-terminal    | revoked      | revoked                              |
 * | any non-terminal    | expired      | expired                              |
 *
 * revoked and expired are terminal. Every other pair is illegal.
 */
import type { AgreementEvent, AgreementStatus, EventType } from "./types.js";

const TERMINAL: ReadonlySet<AgreementStatus> = new Set<AgreementStatus>(["revoked", "expired"]);
const SIGNED: ReadonlySet<AgreementStatus> = new Set<AgreementStatus>(["accepted", "active"]);

/** The status after `eventType` in `status`, or undefined when the move is illegal. */
export function nextStatus(status: AgreementStatus, eventType: EventType): AgreementStatus | undefined {
  if (TERMINAL.has(status)) return undefined;
  switch (eventType) {
    case "clarified":
      return status === "proposed" || status === "clarifying" ? "clarifying" : undefined;
    case "accepted":
      return status === "proposed" || status === "clarifying" ? "accepted" : undefined;
    case "activated":
      return status === "accepted" ? "active" : undefined;
    case "acknowledged":
    case "amended":
    case "added":
      return SIGNED.has(status) ? status : undefined;
    case "revoked":
      return "revoked";
    case "expired":
      return "expired";
    default:
      // "proposed" only starts a log; unknown types are illegal.
      return undefined;
  }
}

/** The status an event log leads to, or the first illegal move. Never throws. */
export function statusFromEvents(events: readonly AgreementEvent[]): { status: AgreementStatus } | { problem: string } {
  if (!Array.isArray(events) || events.length === 0) return { problem: "the event log is empty" };
  if (events[0]?.type !== "proposed") return { problem: "event 0 must be of type proposed" };
  let status: AgreementStatus = "proposed";
  for (let i = 1; i < events.length; i++) {
    const type = events[i]?.type;
    const next: AgreementStatus | undefined = type === undefined ? undefined : nextStatus(status, type);
    if (next === undefined) return { problem: `event ${i} (${String(type)}) is not allowed in status ${status}` };
    status = next;
  }
  return { status };
}
