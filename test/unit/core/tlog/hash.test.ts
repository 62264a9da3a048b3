import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { EMPTY_ROOT, leafHash, nodeHash } from "../../../../src/core/tlog/index.js";

const sha = (...parts: Uint8Array[]): string => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex");
};

describe("RFC 6962 hashing", () => {
  it("hashes the empty tree as SHA-256 of nothing", () => {
    expect(EMPTY_ROOT.toString("hex")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("prefixes leaves with 0x00 (RFC 6962 test vector: the empty leaf)", () => {
    expect(leafHash(new Uint8Array()).toString("hex")).toBe("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
    const data = Buffer.from("writ");
    expect(leafHash(data).toString("hex")).toBe(sha(Buffer.from([0]), data));
  });

  it("prefixes interior nodes with 0x01 and keeps the order of children", () => {
    const l = leafHash(Buffer.from([0]));
    const r = leafHash(Buffer.from([0x10]));
    expect(nodeHash(l, r).toString("hex")).toBe(sha(Buffer.from([1]), l, r));
    expect(nodeHash(l, r).equals(nodeHash(r, l))).toBe(false);
    // A leaf and a node over the same bytes never collide (domain separation).
    expect(leafHash(Buffer.concat([l, r])).equals(nodeHash(l, r))).toBe(false);
  });
});
