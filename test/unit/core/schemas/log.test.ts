import { describe, expect, it } from "vitest";
import { validate } from "../../../../src/core/schemas/index.js";

const hash = (hexDigit: string) => `sha256:${hexDigit.repeat(64)}`;
const jws = { protected: "eyJhbGciOiJFZERTQSIsInR5cCI6InN2Yy10cmVlLWhlYWQrandzIn0", payload: "e30", signature: "c2ln" };

const first = { kind: "agreement", sequence: 1, body: { agreement_id: "agr_1" }, entry_hash: hash("1") };
const second = { kind: "incident", sequence: 2, body: {}, entry_hash: hash("2"), prev_entry_hash: hash("1") };
const head = { algorithm: "EdDSA", at: "2025-05-01T08:00:00Z", svc_tree_head: 1, root: hash("9"), tree_size: 2, signature: jws };
const proof = {
  sequence: 3,
  index: 2,
  leaf: hash("3"),
  proof: [
    { hash: hash("4"), side: "right" },
    { hash: hash("5"), side: "left" },
  ],
  root: hash("9"),
  tree_size: 4,
};

describe("transparency log entry", () => {
  it("accepts a first entry without a predecessor and a later entry with one", () => {
    expect(validate("log-entry", first).ok).toBe(true);
    expect(validate("log-entry", second).ok).toBe(true);
  });

  it("starts the sequence at 1", () => {
    expect(validate("log-entry", { ...first, sequence: 0 })).toEqual({ ok: false, errors: ["/sequence: must be >= 1"] });
    expect(validate("log-entry", { ...second, sequence: 2 ** 53 })).toEqual({
      ok: false,
      errors: ["/sequence: must be <= 9007199254740991"],
    });
  });

  it("requires prev_entry_hash after the first entry and refuses it on the first", () => {
    const { prev_entry_hash: _omitted, ...orphan } = second;
    expect(validate("log-entry", orphan)).toEqual({
      ok: false,
      errors: ["/: must have required property 'prev_entry_hash' (required on every entry after the first)"],
    });
    expect(validate("log-entry", { ...first, prev_entry_hash: hash("0") })).toEqual({
      ok: false,
      errors: ["/: must not have property 'prev_entry_hash' (the first entry has no predecessor)"],
    });
  });

  it("checks kind, body and extra members", () => {
    expect(validate("log-entry", { ...first, kind: "payment", body: [], note: "x" })).toEqual({
      ok: false,
      errors: [
        "/: must not have additional property 'note'",
        "/kind: must be one of: agreement, revocation, registration, incident",
        "/body: must be an object",
      ],
    });
  });
});

describe("signed tree head", () => {
  it("accepts an EdDSA tree head, including the empty tree", () => {
    expect(validate("tree-head", head).ok).toBe(true);
    expect(validate("tree-head", { ...head, tree_size: 0 }).ok).toBe(true);
  });

  it("refuses another algorithm, another version marker and a malformed signature", () => {
    expect(validate("tree-head", { ...head, algorithm: "ES256" })).toEqual({
      ok: false,
      errors: ['/algorithm: must equal "EdDSA"'],
    });
    expect(validate("tree-head", { ...head, svc_tree_head: "1", tree_size: -1, signature: { ...jws, kid: "k" } })).toEqual({
      ok: false,
      errors: ["/svc_tree_head: must equal 1", "/tree_size: must be >= 0", "/signature: must not have additional property 'kid'"],
    });
  });
});

describe("inclusion proof", () => {
  it("accepts a proof with left and right siblings", () => {
    expect(validate("inclusion-proof", proof).ok).toBe(true);
  });

  it("refuses a side other than left or right", () => {
    const bad = { ...proof, proof: [proof.proof[0], { hash: hash("5"), side: "up" }] };
    expect(validate("inclusion-proof", bad)).toEqual({
      ok: false,
      errors: ["/proof/1/side: must be one of: left, right"],
    });
  });

  it("bounds the audit path and the numbers", () => {
    const long = { ...proof, proof: Array.from({ length: 65 }, () => ({ hash: hash("7"), side: "left" })) };
    expect(validate("inclusion-proof", long)).toEqual({ ok: false, errors: ["/proof: must have at most 64 items"] });
    expect(validate("inclusion-proof", { ...proof, index: -1, tree_size: 0, leaf: "abc" })).toEqual({
      ok: false,
      errors: ["/index: must be >= 0", "/leaf: must match pattern ^sha256:[0-9a-f]{64}$", "/tree_size: must be >= 1"],
    });
  });
});
