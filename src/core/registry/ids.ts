/**
 * Identifier and API key token formats of the registry. Randomness is the caller's (the store
 * passes `crypto.randomBytes`); these functions only shape bytes into ids and tokens.
 *
 * Formats (docs/registry.md, "Identifiers"):
 * - ids: `<prefix>_` + 24 lowercase hex (12 random bytes): `org_`, `key_`, `inq_`, `rpt_`,
 *   `sub_`, and `evt_` for alert events;
 * - API key token: `bur_` + base64url (no padding) of 32 random bytes (47 characters);
 *   its display `prefix` is the first 12 characters; it is stored only as the lowercase hex of
 *   SHA-256(token).
 */
import { createHash } from "node:crypto";

/** The id prefixes of registry records. */
export const ID_PREFIXES = { org: "org", key: "key", inquiry: "inq", report: "rpt", subscription: "sub", event: "evt" } as const;

/** A kind of registry id. */
export type IdKind = keyof typeof ID_PREFIXES;

/** Random bytes in an id. */
export const ID_RANDOM_BYTES = 12;

/** Random bytes in an API key token. */
export const TOKEN_RANDOM_BYTES = 32;

/** Length of a key's display prefix. */
export const TOKEN_PREFIX_LENGTH = 12;

/** The prefix every API key token begins with. */
export const TOKEN_MARKER = "bur_";

/** Pattern of an id of `kind`. */
export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIXES[kind]}_[0-9a-f]{${ID_RANDOM_BYTES * 2}}$`;
}

/** True when `v` is a well-formed id of `kind`. */
export function isId(kind: IdKind, v: unknown): v is string {
  return typeof v === "string" && new RegExp(idPattern(kind)).test(v);
}

/** The id of `kind` made of `random` (exactly ID_RANDOM_BYTES bytes). */
export function formatId(kind: IdKind, random: Uint8Array): string {
  if (random.length !== ID_RANDOM_BYTES) throw new RangeError(`an id needs ${ID_RANDOM_BYTES} random bytes`);
  return `${ID_PREFIXES[kind]}_${Buffer.from(random).toString("hex")}`;
}

/** The API key token made of `random` (exactly TOKEN_RANDOM_BYTES bytes). */
export function formatKeyToken(random: Uint8Array): string {
  if (random.length !== TOKEN_RANDOM_BYTES) throw new RangeError(`a key token needs ${TOKEN_RANDOM_BYTES} random bytes`);
  return TOKEN_MARKER + Buffer.from(random).toString("base64url");
}

/** Pattern of an API key token. */
export const KEY_TOKEN_PATTERN = "^bur_[A-Za-z0-9_-]{43}$";
const KEY_TOKEN_RE = new RegExp(KEY_TOKEN_PATTERN);

/** True when `v` has the shape of an API key token (says nothing about whether it exists). */
export function looksLikeKeyToken(v: unknown): v is string {
  return typeof v === "string" && KEY_TOKEN_RE.test(v);
}

/** The display prefix of a token: its first TOKEN_PREFIX_LENGTH characters. */
export function tokenPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX_LENGTH);
}

/** What is stored of a token: lowercase hex of SHA-256 over its UTF-8 bytes. */
export function tokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}
