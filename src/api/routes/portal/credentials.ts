/**
 * The secrets and ids of portal sign-in, and the e-mail rules.
 *
 * Formats: a sign-in token is 32 random bytes in base64url (43 characters); a session token is
 * `bps_` + 32 random bytes in base64url; a principal id is `prn_` + 16 random bytes in base64url.
 * Tokens are stored only as `tokenHash(token)` = SHA-256 of the token's UTF-8 text.
 *
 * E-mail rule: an address is trimmed and lower-cased; it is plausible when it is at most 254
 * characters, has exactly one `@` with something on both sides and holds no whitespace or
 * control character. Anything else is accepted by the endpoint (`{sent: true}`) and ignored.
 */
import { randomBytes } from "node:crypto";
import { sha256 } from "../../../core/canonical/index.js";

/** Prefix of session tokens. */
export const SESSION_PREFIX = "bps_";

/** A new sign-in token (the secret in the magic link). */
export function newSignInToken(): string {
  return randomBytes(32).toString("base64url");
}

/** A new session token. */
export function newSessionToken(): string {
  return SESSION_PREFIX + randomBytes(32).toString("base64url");
}

/** A new principal id. */
export function newPrincipalId(): string {
  return "prn_" + randomBytes(16).toString("base64url");
}

/** SHA-256 of a token's UTF-8 text: the only form in which tokens are stored. */
export function tokenHash(token: string): Buffer {
  return sha256(token);
}

/** Longest plausible e-mail address (RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;

// One "@", no whitespace (which includes CR and LF) and no control characters anywhere.
// eslint-disable-next-line no-control-regex
const EMAIL_RE = /^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+$/u;

/** The normalised address, or null when it is not a plausible e-mail address. */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  if (email.length < 3 || email.length > MAX_EMAIL_LENGTH) return null;
  return EMAIL_RE.test(email) ? email : null;
}

/** The session token in an `Authorization: Bearer bps_...` header, or null. */
export function bearerSessionToken(header: string | undefined): string | null {
  if (typeof header !== "string") return null;
  const m = /^Bearer +(bps_[A-Za-z0-9_-]{1,128})$/i.exec(header.trim());
  return m?.[1] ?? null;
}
