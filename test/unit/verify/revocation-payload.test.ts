// The payloads the revocation channel (src/verify/revocation-channel.ts) consumes; they are
// defined in src/store/revocation/announce.ts.
import { describe, expect, it } from "vitest";
import { hashOf } from "../../../src/core/canonical/index.js";
import { announcementPayloads, MAX_PAYLOAD_BYTES, parseRevocationPayload } from "../../../src/store/revocation/announce.js";

describe("revocation payloads", () => {
  it("round-trip, deduplicated, with the organization the ids name records of", () => {
    const [p, ...rest] = announcementPayloads("delegation", ["a", "b", "a"], "org_a");
    expect(rest).toEqual([]);
    expect(parseRevocationPayload(p)).toEqual({ kind: "delegation", org: "org_a", ids: ["a", "b"] });
    // Records without an organization ('' ), also from a payload without `org`.
    expect(parseRevocationPayload(announcementPayloads("agreement", ["c"])[0])).toEqual({ kind: "agreement", org: "", ids: ["c"] });
    expect(parseRevocationPayload('{"kind":"agreement","ids":["c"]}')).toEqual({ kind: "agreement", org: "", ids: ["c"] });
    expect(parseRevocationPayload('{"kind":"agreement","org":1,"ids":["c"]}')).toBeUndefined();
  });

  it("split long id lists so every payload stays under the NOTIFY limit and nothing is lost", () => {
    const ids = Array.from({ length: 400 }, (_, i) => `del-${"x".repeat(200)}-${i}`);
    const payloads = announcementPayloads("agreement", ids);
    expect(payloads.length).toBeGreaterThan(1);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
    expect(payloads.flatMap((p) => parseRevocationPayload(p)?.ids ?? [])).toEqual(ids);
    expect(announcementPayloads("agreement", [])).toEqual([]);
    expect(() => announcementPayloads("agreement", [""])).toThrow(TypeError);
  });

  it("read a revocation-feed notice as the agreement it names", () => {
    const notice = { sequence: 3, revocation_id: hashOf("r"), agreement_id: "agr-7", mandate_hash: hashOf("m"), at: "2026-01-01T00:00:00Z" };
    expect(parseRevocationPayload(JSON.stringify(notice))).toEqual({ kind: "agreement", org: "", ids: ["agr-7"] });
    expect(parseRevocationPayload(JSON.stringify({ ...notice, org_id: "org_b" }))).toEqual({ kind: "agreement", org: "org_b", ids: ["agr-7"] });
  });

  it("ignore anything else", () => {
    for (const p of [
      undefined,
      "",
      "not json",
      "[]",
      "null",
      '{"kind":"delegation","ids":[]}',
      '{"kind":"delegation","ids":[1]}',
      '{"kind":"agent","ids":["a"]}',
      '{"sequence":1}',
    ]) {
      expect(parseRevocationPayload(p)).toBeUndefined();
    }
    expect(parseRevocationPayload(JSON.stringify({ kind: "agreement", ids: ["x".repeat(257)] }))).toBeUndefined();
  });
});
