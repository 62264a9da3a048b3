import { describe, expect, it } from "vitest";
import { hashBytes, hashFromBytes, hashOf, hashWithout, isHashString, sha256Hash } from "../../../src/core/canonical/index.js";

describe("hash strings", () => {
  it("hashes the canonical form, independent of key order", () => {
    expect(hashOf({ b: 1, a: [true, null, "x"] })).toBe(hashOf({ a: [true, null, "x"], b: 1 }));
    expect(hashOf({ a: 1 })).toBe(sha256Hash('{"a":1}'));
    expect(sha256Hash("")).toBe("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
  it("hashWithout drops exactly one top-level member", () => {
    const ev = { a: 1, event_hash: "sha256:00", nested: { event_hash: 2 } };
    expect(hashWithout(ev, "event_hash")).toBe(hashOf({ a: 1, nested: { event_hash: 2 } }));
  });
  it("recognizes well-formed hash strings only", () => {
    const h = sha256Hash("x");
    expect(isHashString(h)).toBe(true);
    expect(isHashString(h.toUpperCase())).toBe(false);
    expect(isHashString(h.slice(0, -1))).toBe(false);
    expect(isHashString(`sha512:${h.slice(7)}`)).toBe(false);
    expect(isHashString(42)).toBe(false);
    expect(hashFromBytes(hashBytes(h))).toBe(h);
    expect(() => hashFromBytes(new Uint8Array(31))).toThrow();
  });
  it("refuses values with no JSON form", () => {
    expect(() => hashOf(undefined)).toThrow();
  });
});
