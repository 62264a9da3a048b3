/**
 * Portal principals and their sign-in tokens (tables of migration 0050).
 *
 * Promise: `issueSignInToken` does the same database work for a known and an unknown e-mail
 * (ONE statement that inserts the principal if new and the token in either case), so timing
 * says little about whether an address is known. `redeemSignInToken` is single-use under any
 * concurrency: of two exchanges of one token exactly one succeeds (one UPDATE ... WHERE
 * used_at IS NULL, which a concurrent exchange re-checks after the first commits), and the
 * session is created in the same statement. Tokens are handled only as their SHA-256 hash.
 */
import type { Queryable } from "./pool.js";

/** Input of `issueSignInToken`. */
export interface IssueSignInToken {
  /** Normalised (trimmed, lower-case) e-mail. */
  email: string;
  /** The principal id to use if the e-mail is new. */
  newPrincipalId: string;
  /** SHA-256 of the sign-in token (32 bytes). */
  tokenHash: Buffer;
  expiresAt: Date;
}

const ISSUE_SQL = `
WITH ins AS (
  INSERT INTO portal_principals (principal_id, email) VALUES ($1, $2)
  ON CONFLICT (email) DO NOTHING
  RETURNING principal_id),
principal AS (
  SELECT principal_id FROM ins
  UNION ALL
  SELECT principal_id FROM portal_principals WHERE email = $2
  LIMIT 1)
INSERT INTO portal_sign_in_tokens (token_hash, principal_id, expires_at)
SELECT $3, principal_id, $4 FROM principal
RETURNING principal_id`;

/**
 * Stores a sign-in token for `email`, creating the principal when the e-mail is new. Returns
 * the principal id (never sent to the caller of the magic-link endpoint).
 */
export async function issueSignInToken(db: Queryable, t: IssueSignInToken): Promise<string> {
  // A concurrent first request for the same new e-mail can leave this statement seeing neither
  // its own insert (conflict) nor the other's row (snapshot): then once more sees it.
  for (let i = 0; i < 3; i++) {
    const { rows } = await db.query<{ principal_id: string }>(ISSUE_SQL, [t.newPrincipalId, t.email, t.tokenHash, t.expiresAt]);
    if (rows[0]) return rows[0].principal_id;
  }
  throw new Error("sign-in token could not be stored");
}

/** Input of `redeemSignInToken`. */
export interface RedeemSignInToken {
  /** SHA-256 of the presented sign-in token. */
  tokenHash: Buffer;
  now: Date;
  /** SHA-256 of the new session token. */
  sessionHash: Buffer;
  sessionExpiresAt: Date;
}

/**
 * Marks the token used and creates the session, atomically. Returns the principal id, or
 * null when the token is unknown, already used or expired (nothing is written then).
 */
export async function redeemSignInToken(db: Queryable, r: RedeemSignInToken): Promise<string | null> {
  const { rows } = await db.query<{ principal_id: string }>(
    `WITH used AS (
       UPDATE portal_sign_in_tokens SET used_at = $2
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
        RETURNING principal_id)
     INSERT INTO portal_sessions (session_hash, principal_id, expires_at)
     SELECT $3, principal_id, $4 FROM used
     RETURNING principal_id`,
    [r.tokenHash, r.now, r.sessionHash, r.sessionExpiresAt],
  );
  return rows[0]?.principal_id ?? null;
}

/**
 * Registers `email` as the sign-in address of the known principal `principalId` (the demo
 * seeding's public demo principal, docs/demo.md), so that a sign-in link for that address
 * signs in as that principal. Idempotent; when the id or the address is already taken, nothing
 * changes and the answer says which principal the address signs in as (null: none).
 */
export async function registerPrincipalEmail(db: Queryable, principalId: string, email: string): Promise<string | null> {
  await db.query("INSERT INTO portal_principals (principal_id, email) VALUES ($1, $2) ON CONFLICT DO NOTHING", [principalId, email]);
  const { rows } = await db.query<{ principal_id: string }>("SELECT principal_id FROM portal_principals WHERE email = $1", [email]);
  return rows[0]?.principal_id ?? null;
}
