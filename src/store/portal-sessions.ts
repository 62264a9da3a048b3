/**
 * Portal sessions (table `portal_sessions`, migration 0050); created by `redeemSignInToken`.
 *
 * Promise: a session is found only by the SHA-256 of its token, only while it is neither
 * expired (against the caller's `now`) nor signed out; signing out is final.
 */
import type { Queryable } from "./pool.js";

/** A live session and its principal. */
export interface PortalSession {
  principalId: string;
  /** The principal's own e-mail (for `GET /v1/portal/me` only). */
  email: string;
  expiresAt: Date;
}

/** The live session whose token hashes to `sessionHash`, or null. */
export async function findSession(db: Queryable, sessionHash: Buffer, now: Date): Promise<PortalSession | null> {
  const { rows } = await db.query<{ principal_id: string; email: string; expires_at: Date }>(
    `SELECT s.principal_id, p.email, s.expires_at
       FROM portal_sessions s JOIN portal_principals p ON p.principal_id = s.principal_id
      WHERE s.session_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2`,
    [sessionHash, now],
  );
  const r = rows[0];
  return r ? { principalId: r.principal_id, email: r.email, expiresAt: r.expires_at } : null;
}

/** Signs a live session out. Returns false when there was no live session to sign out. */
export async function endSession(db: Queryable, sessionHash: Buffer, now: Date): Promise<boolean> {
  const { rowCount } = await db.query("UPDATE portal_sessions SET revoked_at = $2 WHERE session_hash = $1 AND revoked_at IS NULL AND expires_at > $2", [
    sessionHash,
    now,
  ]);
  return rowCount === 1;
}
