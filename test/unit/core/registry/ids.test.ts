import { createHash, randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ID_PREFIXES,
  formatId,
  formatKeyToken,
  idPattern,
  isId,
  looksLikeKeyToken,
  tokenHash,
  tokenPrefix,
  type IdKind,
} from "../../../../src/core/registry/index.js";

describe("ids", () => {
  it("formats <prefix>_ + 24 lowercase hex for every kind", () => {
    const kinds = Object.keys(ID_PREFIXES) as IdKind[];
    expect(kinds.map((k) => ID_PREFIXES[k])).toEqual(["org", "key", "inq", "rpt", "sub", "evt"]);
    for (const k of kinds) {
      const id = formatId(k, randomBytes(12));
      expect(id).toMatch(new RegExp(idPattern(k)));
      expect(id.startsWith(`${ID_PREFIXES[k]}_`)).toBe(true);
      expect(isId(k, id)).toBe(true);
    }
    expect(formatId("org", Buffer.alloc(12, 0xab))).toBe("org_abababababababababababab");
    expect(isId("org", "key_abababababababababababab")).toBe(false);
    expect(() => formatId("org", randomBytes(11))).toThrow(RangeError);
  });
});

describe("API key tokens", () => {
  it("are bur_ + 43 base64url characters; the prefix is the first 12 characters", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        const token = formatKeyToken(bytes);
        expect(token).toHaveLength(47);
        expect(token.startsWith("bur_")).toBe(true);
        expect(looksLikeKeyToken(token)).toBe(true);
        expect(tokenPrefix(token)).toBe(token.slice(0, 12));
        expect(Buffer.from(token.slice(4), "base64url").equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 100 },
    );
    expect(() => formatKeyToken(randomBytes(16))).toThrow(RangeError);
  });

  it("are stored as the lowercase hex SHA-256 of the token", () => {
    const token = formatKeyToken(randomBytes(32));
    expect(tokenHash(token)).toBe(createHash("sha256").update(token).digest("hex"));
    expect(tokenHash(token)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("tells token-shaped strings from others", () => {
    expect(looksLikeKeyToken("bur_short")).toBe(false);
    expect(looksLikeKeyToken(`key_${"a".repeat(43)}`)).toBe(false);
    expect(looksLikeKeyToken(`bur_${"a".repeat(42)}=`)).toBe(false);
    expect(looksLikeKeyToken(null)).toBe(false);
  });
});
