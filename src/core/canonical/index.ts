/**
 * Canonical JSON (RFC 8785, JCS) and the `sha256:` hash strings used everywhere in Writ.
 *
 * Contract: `canonicalJson` is byte-for-byte RFC 8785; `hashOf(x)` is
 * `"sha256:" + hex(SHA-256(UTF-8(JCS(x))))`; `hashWithout(x, field)` hashes `x` with one
 * top-level member removed (the rule for `event_hash`, `entry_hash` and `mandate_hash`).
 * RFC 8785 takes I-JSON input: `findLoneSurrogate` (./well-formed.ts) finds text that is not,
 * and `findInexactNumber` (./exact-numbers.ts) a number a double cannot hold exactly.
 */
import { createHash, hash } from "node:crypto";
import { createRequire } from "node:module";

export { describeInexactNumber, findInexactNumber, isExactNumberLiteral, type InexactNumber } from "./exact-numbers.js";
export { describeLoneSurrogate, findLoneSurrogate, hasNul, isWellFormedText, type LoneSurrogate } from "./well-formed.js";

// canonicalize 2.x is CommonJS (`module.exports = fn`); its typings claim an ES default export.
const canonicalize = createRequire(import.meta.url)("canonicalize") as (input: unknown) => string | undefined;

/** `sha256:` followed by 64 lowercase hex digits. */
export const HASH_PATTERN = "^sha256:[0-9a-f]{64}$";
const HASH_RE = new RegExp(HASH_PATTERN);

/** A `sha256:` hash string. */
export type HashString = `sha256:${string}`;

/** True when `s` is a well-formed `sha256:` hash string. */
export function isHashString(s: unknown): s is HashString {
  return typeof s === "string" && HASH_RE.test(s);
}

/** RFC 8785 canonical form of a JSON value. Throws on values JSON cannot represent. */
export function canonicalJson(value: unknown): string {
  const out = canonicalize(value);
  if (out === undefined) throw new TypeError("value has no canonical JSON form");
  return out;
}

/** UTF-8 bytes of the canonical form. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), "utf8");
}

/** `sha256:` + hex of SHA-256 over raw bytes. */
export function sha256Hash(bytes: Uint8Array | string): HashString {
  return `sha256:${hash("sha256", bytes, "hex")}`;
}

/** Raw SHA-256 digest. */
export function sha256(bytes: Uint8Array | string): Buffer {
  return createHash("sha256").update(bytes).digest();
}

/** Hash of the canonical form of a JSON value. */
export function hashOf(value: unknown): HashString {
  return sha256Hash(canonicalJson(value));
}

/** Hash of the canonical form of `obj` with the top-level member `field` removed. */
export function hashWithout<T extends object>(obj: T, field: keyof T & string): HashString {
  const { [field]: _omit, ...rest } = obj as Record<string, unknown>;
  return hashOf(rest);
}

/** Decodes a `sha256:` hash string to its 32 bytes. */
export function hashBytes(h: HashString): Buffer {
  if (!isHashString(h)) throw new TypeError("not a sha256: hash string");
  return Buffer.from(h.slice(7), "hex");
}

/** Encodes 32 digest bytes as a `sha256:` hash string. */
export function hashFromBytes(b: Uint8Array): HashString {
  if (b.length !== 32) throw new TypeError("a SHA-256 digest has 32 bytes");
  return `sha256:${Buffer.from(b).toString("hex")}`;
}
