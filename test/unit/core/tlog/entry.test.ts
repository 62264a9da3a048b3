import { describe, expect, it } from "vitest";
import { canonicalBytes, hashOf, sha256Hash } from "../../../../src/core/canonical/index.js";
import {
  LOG_KINDS,
  LogEntryError,
  buildLogEntry,
  leafHash,
  logLeafHash,
  verifyLogEntry,
  verifyLogLink,
  type LogEntry,
  type LogKind,
} from "../../../../src/core/tlog/index.js";

const first = buildLogEntry("registration", 1, { agent_id: "agt_1", principal_id: "prn_9" });
const second = buildLogEntry("revocation", 2, { agreement_id: "agr_1", reason: "lost key" }, first.entry_hash);

describe("log entries", () => {
  it("lists the four kinds of the spec", () => {
    expect([...LOG_KINDS]).toEqual(["agreement", "revocation", "registration", "incident"]);
  });

  it("hashes the canonical entry without entry_hash", () => {
    expect(first).toEqual({
      kind: "registration",
      sequence: 1,
      body: { agent_id: "agt_1", principal_id: "prn_9" },
      entry_hash: hashOf({ kind: "registration", sequence: 1, body: { agent_id: "agt_1", principal_id: "prn_9" } }),
    });
    expect("prev_entry_hash" in first).toBe(false);
    expect(second.prev_entry_hash).toBe(first.entry_hash);
    expect(second.entry_hash).toBe(hashOf({ kind: "revocation", sequence: 2, body: second.body, prev_entry_hash: first.entry_hash }));
  });

  it("refuses a body that is not I-JSON (a lone surrogate in a value or a member name), naming where; emoji are fine", () => {
    expect(() => buildLogEntry("incident", 1, { lone: "\ud800x" })).toThrow(new LogEntryError("body.lone must not contain a lone surrogate"));
    expect(() => buildLogEntry("incident", 1, { a: [{ "\udc00": 1 }] })).toThrow(
      new LogEntryError("member names of body.a.0 must not contain a lone surrogate"),
    );
    expect(() => buildLogEntry("incident", 1, { "k\ud800": 1 })).toThrow(new LogEntryError("member names of body must not contain a lone surrogate"));
    expect(buildLogEntry("incident", 1, { "😀": "😀" }).body).toEqual({ "😀": "😀" });
  });

  it("uses the RFC 6962 leaf hash of the whole canonical entry as the Merkle leaf", () => {
    expect(logLeafHash(second).equals(leafHash(canonicalBytes(second)))).toBe(true);
    expect(logLeafHash(second).equals(logLeafHash(first))).toBe(false);
  });

  it("stores the body in its canonical JSON form", () => {
    const e = buildLogEntry("incident", 1, { b: 1, a: { d: undefined, c: -0 }, z: 1e21 });
    expect(e.body).toEqual({ a: { c: 0 }, b: 1, z: 1e21 });
    expect(verifyLogEntry(e)).toBeUndefined();
  });

  it("accepts sound entries and a sound chain", () => {
    expect(verifyLogEntry(first)).toBeUndefined();
    expect(verifyLogEntry(JSON.parse(JSON.stringify(second)))).toBeUndefined();
    expect(verifyLogLink(undefined, first)).toBeUndefined();
    expect(verifyLogLink(first, second)).toBeUndefined();
  });

  it("rejects tampered or ill-shaped entries", () => {
    const bad: unknown[] = [
      { ...second, body: { ...second.body, reason: "other" } },
      { ...second, sequence: 3 },
      { ...second, kind: "agreement" },
      { ...second, prev_entry_hash: sha256Hash("x") },
      { ...second, entry_hash: "sha256:" + "0".repeat(64) },
      { ...second, entry_hash: "sha256:ABC" },
      { ...second, extra: 1 },
      { ...second, kind: "other" },
      { ...second, sequence: 0 },
      { ...second, sequence: 2.5 },
      { ...second, sequence: "2" },
      { ...second, body: [] },
      { ...second, body: null },
      (({ prev_entry_hash: _p, ...rest }) => rest)(second),
      { ...first, prev_entry_hash: first.entry_hash },
      null,
      [],
      "entry",
    ];
    for (const e of bad) expect(typeof verifyLogEntry(e)).toBe("string");
  });

  it("rejects broken links", () => {
    const stranger = buildLogEntry("revocation", 2, { agreement_id: "agr_1" }, sha256Hash("not first"));
    expect(verifyLogLink(first, stranger)).toBeTypeOf("string");
    const third = buildLogEntry("incident", 3, {}, second.entry_hash);
    expect(verifyLogLink(first, third)).toBeTypeOf("string");
    expect(verifyLogLink(undefined, second)).toBeTypeOf("string");
  });

  it("refuses to build an entry from bad input", () => {
    const attempts: Array<() => LogEntry> = [
      () => buildLogEntry("other" as LogKind, 1, {}),
      () => buildLogEntry("incident", 0, {}),
      () => buildLogEntry("incident", 2 ** 53, {}, first.entry_hash),
      () => buildLogEntry("incident", 1.5, {}),
      () => buildLogEntry("incident", 1, [] as unknown as Record<string, unknown>),
      () => buildLogEntry("incident", 1, {}, first.entry_hash),
      () => buildLogEntry("incident", 2, {}),
      () => buildLogEntry("incident", 2, {}, "sha256:nope" as never),
      () => buildLogEntry("incident", 1, { n: 10n }),
    ];
    for (const attempt of attempts) expect(attempt).toThrow(LogEntryError);
  });
});
