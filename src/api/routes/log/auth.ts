/**
 * The append token check of `POST /v1/log/entries`: `Authorization: Bearer <token>` against
 * SVC_APPEND_TOKEN in constant time. Both sides are hashed with SHA-256 first, so the
 * comparison takes the same time whatever the lengths and contents; a missing header or
 * another scheme is compared too (against the empty string) and then refused.
 */
import { createHash, timingSafeEqual } from "node:crypto";

const BEARER_RE = /^Bearer +(\S+) *$/i;

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

/** True when `authorization` is `Bearer <expected>`. */
export function appendTokenMatches(authorization: unknown, expected: string): boolean {
  const m = typeof authorization === "string" ? BEARER_RE.exec(authorization) : null;
  const given = m?.[1] ?? "";
  const same = timingSafeEqual(digest(given), digest(expected));
  return same && m !== null;
}
