/**
 * What the checking of agents' signed HTTP requests reads and writes (docs/reference/
 * request-signatures.md): the key directory's rows (agents that are active and not displaced),
 * the agent a key fingerprint names, and the nonce store (table `request_nonces`,
 * migrations/0310_request_nonces.sql).
 *
 * Promises: `claimNonce` is atomic across processes (one INSERT ... ON CONFLICT DO NOTHING):
 * of two claims of the same (keyid, nonce) while the first row lives, exactly one succeeds.
 * Each claim also deletes at most PRUNE_PER_CLAIM rows whose keep_until has passed (retention
 * without a separate job: the table stays about the size of the signatures still alive).
 */
import type { HashString } from "../core/canonical/index.js";
import type { PublicJwk } from "../core/jose/index.js";
import type { AgentRecord } from "./agents.js";
import type { Queryable } from "./pool.js";

/** Expired nonce rows one claim deletes at most. */
export const PRUNE_PER_CLAIM = 16;

/** A row of the key directory. */
export interface DirectoryRow {
  agent_id: string;
  org_id: string;
  public_key: PublicJwk;
  verification_level: string;
}

/** The agents the key directory lists: active and not displaced, by agent id. */
export async function directoryRows(q: Queryable): Promise<DirectoryRow[]> {
  const { rows } = await q.query<DirectoryRow>(
    "SELECT agent_id, org_id, public_key, verification_level FROM agents WHERE status = 'active' AND displaced_at IS NULL ORDER BY agent_id",
  );
  return rows;
}

/** The agent whose key has `fingerprint` and is not displaced (whatever its status), or undefined. */
export async function agentByFingerprint(q: Queryable, fingerprint: HashString): Promise<AgentRecord | undefined> {
  const { rows } = await q.query<AgentRecord>(
    `SELECT agent_id, org_id, principal_id, verification_level, status, public_key, fingerprint, key_proven, displaced_at, displaced_by, registered_at, updated_at
     FROM agents WHERE fingerprint = $1 AND displaced_at IS NULL`,
    [fingerprint],
  );
  return rows[0];
}

/**
 * Claims `nonce` for `keyid` until `keepUntil`: true when this is its first claim, false when
 * the pair was already claimed and its row still lives (a replay). `now` decides which old rows
 * are pruned.
 */
export async function claimNonce(q: Queryable, keyid: string, nonce: string, keepUntil: Date, now: Date): Promise<boolean> {
  const { rows } = await q.query(
    `WITH pruned AS (
       DELETE FROM request_nonces WHERE ctid = ANY (ARRAY(SELECT ctid FROM request_nonces WHERE keep_until < $4 AND (keyid, nonce) <> ($1, $2) LIMIT ${PRUNE_PER_CLAIM}))
     )
     INSERT INTO request_nonces (keyid, nonce, keep_until) VALUES ($1, $2, $3)
     ON CONFLICT (keyid, nonce) DO UPDATE SET keep_until = EXCLUDED.keep_until WHERE request_nonces.keep_until < $4
     RETURNING 1`,
    [keyid, nonce, keepUntil, now],
  );
  return rows.length === 1;
}
