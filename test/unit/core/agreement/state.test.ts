import { describe, expect, it } from "vitest";
import { nextStatus, statusFromEvents } from "../../../../src/core/agreement/state.js";
import { AGREEMENT_STATUSES, EVENT_TYPES, type AgreementEvent, type AgreementStatus, type EventType } from "../../../../src/core/agreement/types.js";

/** The documented table, written out in full: every pair not listed is illegal. */
const LEGAL: Record<string, AgreementStatus> = {
  "proposed clarified": "clarifying",
  "clarifying clarified": "clarifying",
  "proposed accepted": "accepted",
  "clarifying accepted": "accepted",
  "accepted activated": "active",
  "accepted acknowledged": "accepted",
  "active acknowledged": "active",
  "accepted amended": "accepted",
  "active amended": "active",
  "accepted added": "accepted",
  "active added": "active",
  "proposed revoked": "revoked",
  "clarifying revoked": "revoked",
  "accepted revoked": "revoked",
  "active revoked": "revoked",
  "proposed expired": "expired",
  "clarifying expired": "expired",
  "accepted expired": "expired",
  "active expired": "expired",
};

function events(types: EventType[]): AgreementEvent[] {
  return types.map((type, i) => ({ type, event_id: `e${i}` }) as AgreementEvent);
}

describe("nextStatus", () => {
  it("allows exactly the moves of the table", () => {
    for (const status of AGREEMENT_STATUSES) {
      for (const type of EVENT_TYPES) {
        expect([status, type, nextStatus(status, type)]).toEqual([status, type, LEGAL[`${status} ${type}`]]);
      }
    }
  });

  it("treats revoked and expired as terminal and never re-proposes", () => {
    for (const type of EVENT_TYPES) {
      expect(nextStatus("revoked", type)).toBeUndefined();
      expect(nextStatus("expired", type)).toBeUndefined();
    }
    for (const status of AGREEMENT_STATUSES) expect(nextStatus(status, "proposed")).toBeUndefined();
    expect(nextStatus("active", "bogus" as EventType)).toBeUndefined();
  });
});

describe("statusFromEvents", () => {
  it("follows a full life", () => {
    expect(statusFromEvents(events(["proposed"]))).toEqual({ status: "proposed" });
    expect(statusFromEvents(events(["proposed", "clarified", "clarified"]))).toEqual({ status: "clarifying" });
    expect(statusFromEvents(events(["proposed", "accepted", "acknowledged", "activated", "amended", "added", "acknowledged"]))).toEqual({
      status: "active",
    });
    expect(statusFromEvents(events(["proposed", "accepted", "activated", "revoked"]))).toEqual({ status: "revoked" });
    expect(statusFromEvents(events(["proposed", "clarified", "expired"]))).toEqual({ status: "expired" });
  });

  it("names the first illegal move", () => {
    expect(statusFromEvents([])).toEqual({ problem: "the event log is empty" });
    expect(statusFromEvents(events(["accepted"]))).toEqual({ problem: "event 0 must be of type proposed" });
    expect(statusFromEvents(events(["proposed", "activated"]))).toEqual({ problem: "event 1 (activated) is not allowed in status proposed" });
    expect(statusFromEvents(events(["proposed", "amended"]))).toMatchObject({ problem: expect.stringMatching(/^event 1 \(amended\)/) });
    expect(statusFromEvents(events(["proposed", "revoked", "accepted"]))).toMatchObject({ problem: expect.stringMatching(/^event 2/) });
    expect(statusFromEvents(events(["proposed", "accepted", "proposed"]))).toMatchObject({ problem: expect.stringMatching(/^event 2/) });
    expect(statusFromEvents(events(["proposed", "accepted", "clarified"]))).toMatchObject({ problem: expect.stringMatching(/^event 2/) });
    expect(statusFromEvents(null as unknown as AgreementEvent[])).toEqual({ problem: "the event log is empty" });
    expect(statusFromEvents([null, null] as unknown as AgreementEvent[])).toEqual({ problem: "event 0 must be of type proposed" });
  });
});
