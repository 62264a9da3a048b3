import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, hashOf, type HashString } from "../../../../src/core/canonical/index.js";
import { buildEvent, verifyEventChain, type EventFields } from "../../../../src/core/agreement/events.js";
import type { AgreementEvent, EventType } from "../../../../src/core/agreement/types.js";

const AGREEMENT = "agr_0001";
const H1: HashString = hashOf("mandate v1");
const H2: HashString = hashOf("mandate v2");

function fields(i: number, type: EventType): EventFields {
  return {
    event_id: `evt_${i}`,
    type,
    at: `2025-01-0${1 + (i % 9)}T10:00:0${i % 10}Z`,
    actor: { role: i % 2 === 0 ? "principal" : "merchant", id: `id_${i}` },
    agreement_id: AGREEMENT,
    mandate_hash: i < 5 ? H1 : H2,
    ...(i === 2 ? { note: "clarified: oat milk, not soy — naïve café" } : {}),
    ...(i === 5 ? { detail: { intent_id: "int_a", previous_mandate_hash: H1, mandate_hash: H2, nested: { n: [1, 2.5, true, null] } } } : {}),
  };
}

const TYPES: EventType[] = ["proposed", "clarified", "clarified", "accepted", "activated", "amended", "acknowledged", "added"];

function log(): AgreementEvent[] {
  const out: AgreementEvent[] = [];
  TYPES.forEach((t, i) => out.push(buildEvent(out[out.length - 1], fields(i, t))));
  return out;
}

describe("buildEvent", () => {
  it("chains each event to the previous one and hashes it without event_hash", () => {
    const events = log();
    expect(events[0]!.prev_event_hash).toBeUndefined();
    for (let i = 1; i < events.length; i++) expect(events[i]!.prev_event_hash).toBe(events[i - 1]!.event_hash);
    for (const e of events) {
      const { event_hash: _h, ...rest } = e;
      expect(e.event_hash).toBe(hashOf(rest));
    }
  });

  it("ignores chain fields smuggled into the caller's fields", () => {
    const first = buildEvent(undefined, fields(0, "proposed"));
    const smuggled = { ...fields(1, "clarified"), prev_event_hash: H1, event_hash: H2 } as EventFields;
    const second = buildEvent(first, smuggled);
    expect(second.prev_event_hash).toBe(first.event_hash);
    expect(second.event_hash).not.toBe(H2);
    const alone = buildEvent(undefined, { ...fields(0, "proposed"), prev_event_hash: H1 } as EventFields);
    expect(alone.prev_event_hash).toBeUndefined();
  });
});

describe("verifyEventChain", () => {
  it("accepts an intact log and an empty one", () => {
    expect(verifyEventChain(log(), AGREEMENT)).toBeUndefined();
    expect(verifyEventChain([], AGREEMENT)).toBeUndefined();
  });

  it("names the first event whose content no longer matches its hash", () => {
    const events = log();
    events[3] = { ...events[3]!, note: "inserted later" };
    expect(verifyEventChain(events, AGREEMENT)).toMatch(/^event 3's event_hash/);
  });

  it("finds a removed, reordered or re-rooted event", () => {
    const removed = log();
    removed.splice(2, 1);
    expect(verifyEventChain(removed, AGREEMENT)).toMatch(/^event 2's prev_event_hash/);
    const swapped = log();
    [swapped[4], swapped[5]] = [swapped[5]!, swapped[4]!];
    expect(verifyEventChain(swapped, AGREEMENT)).toMatch(/^event 4's prev_event_hash/);
    const truncatedHead = log().slice(1);
    expect(verifyEventChain(truncatedHead, AGREEMENT)).toMatch(/^event 0 has a prev_event_hash/);
  });

  it("finds another agreement's event, a repeated event_id and a malformed hash", () => {
    const events = log();
    expect(verifyEventChain(events, "agr_other")).toMatch(/^event 0 names another agreement/);
    const foreign: AgreementEvent[] = [];
    TYPES.forEach((t, i) => foreign.push(buildEvent(foreign[foreign.length - 1], { ...fields(i, t), agreement_id: i === 6 ? "agr_x" : AGREEMENT })));
    expect(verifyEventChain(foreign, AGREEMENT)).toMatch(/^event 6 names another agreement/);
    const dup: AgreementEvent[] = [];
    TYPES.forEach((t, i) => dup.push(buildEvent(dup[dup.length - 1], { ...fields(i, t), event_id: i === 4 ? "evt_1" : `evt_${i}` })));
    expect(verifyEventChain(dup, AGREEMENT)).toMatch(/^event 4 repeats event_id/);
    const upper = log();
    upper[7] = { ...upper[7]!, event_hash: upper[7]!.event_hash.toUpperCase() as HashString };
    expect(verifyEventChain(upper, AGREEMENT)).toMatch(/^event 7's event_hash/);
  });

  it("reports hostile shapes instead of throwing", () => {
    expect(verifyEventChain("nope" as unknown as AgreementEvent[], AGREEMENT)).toMatch(/not an array/);
    expect(verifyEventChain([null] as unknown as AgreementEvent[], AGREEMENT)).toMatch(/^event 0 is not an object/);
    const events = log();
    const withUndefined = [...events.slice(0, 2), { ...events[2]!, detail: { f: () => 1 } }] as AgreementEvent[];
    expect(verifyEventChain(withUndefined, AGREEMENT)).toMatch(/^event 2/);
    const oddType = buildEvent(undefined, { ...fields(0, "proposed"), type: "paused" as EventType });
    expect(verifyEventChain([oddType], AGREEMENT)).toMatch(/^event 0 has an unknown type "paused"/);
    const oddHash = buildEvent(undefined, { ...fields(0, "proposed"), mandate_hash: "sha256:XYZ" as HashString });
    expect(verifyEventChain([oddHash], AGREEMENT)).toMatch(/^event 0 has a malformed mandate_hash/);
    const { event_id: _id, ...noId } = events[0]!;
    expect(verifyEventChain([noId as AgreementEvent], AGREEMENT)).toMatch(/^event 0 has no event_id/);
  });

  it("detects any one-byte change to the canonical log", () => {
    const events = log();
    const bytes = Buffer.from(canonicalJson(events), "utf8");
    let runs = 0;
    let valueChanges = 0;
    fc.assert(
      fc.property(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 0, max: 255 }), (at, value) => {
        runs++;
        const copy = Buffer.from(bytes);
        copy[at] = value === copy[at] ? (value + 1) % 256 : value;
        let parsed: unknown;
        try {
          parsed = JSON.parse(new TextDecoder().decode(copy));
        } catch {
          return;
        }
        if (isDeepStrictEqual(parsed, events)) return;
        valueChanges++;
        expect(verifyEventChain(parsed as AgreementEvent[], AGREEMENT)).toBeTypeOf("string");
      }),
      { numRuns: 200 },
    );
    expect(valueChanges).toBeGreaterThan(runs * 0.25);
  });
});
