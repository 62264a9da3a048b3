/**
 * Organization API keys (table `api_keys`, migrations/0030_registry.sql).
 *
 * Promise: a token exists in this process only while it is issued (returned once by
 * `issueKey`); the database holds only its SHA-256 hex and its 12-character display prefix.
 * `findKeyByToken` looks a presented token up by that hash, so no comparison of secrets takes
 * place in this process, and it reads the row fresh every time. (The API keeps an active key's
 * credential in memory between change notices: src/api/plugins/auth.ts.)
 */
import { randomBytes } from "node:crypto";
import {
  formatId,
  formatKeyToken,
  ID_RANDOM_BYTES,
  TOKEN_RANDOM_BYTES,
  tokenHash,
  tokenPrefix,
  type OrgStatus,
  type OrgType,
  type Scope,
} from "../core/registry/index.js";
import type { Queryable } from "./pool.js";

/** A key as lists show it (never the token). */
export interface ApiKeyRecord {
  key_id: string;
  prefix: string;
  name: string;
  scopes: Scope[];
  /** RFC 3339, UTC. */
  created_at: string;
  /** RFC 3339, UTC, or null while the key is live. */
  revoked_at: string | null;
}

/** A newly issued key: the only time the token is seen. */
export interface IssuedKey {
  key_id: string;
  prefix: string;
  scopes: Scope[];
  token: string;
}

/** What authentication learns from a presented token. */
export interface KeyLookup {
  key_id: string;
  org_id: string;
  org_type: OrgType;
  org_status: OrgStatus;
  scopes: Scope[];
  revoked: boolean;
}

interface Row {
  key_id: string;
  prefix: string;
  name: string;
  scopes: Scope[];
  created_at: Date;
  revoked_at: Date | null;
}

const COLUMNS = "key_id, prefix, name, scopes, created_at, revoked_at";

function toRecord(r: Row): ApiKeyRecord {
  return {
    key_id: r.key_id,
    prefix: r.prefix,
    name: r.name,
    scopes: r.scopes,
    created_at: r.created_at.toISOString(),
    revoked_at: r.revoked_at ? r.revoked_at.toISOString() : null,
  };
}

/**
 * Issues a key of organization `org_id` holding `scopes` (already resolved), at `now`.
 * `opts.tokenBytes` (32 bytes) makes the token deterministic: only for the PUBLIC demo keys
 * (`POST /v1/admin/seed-demo`); every other key is random.
 */
export async function issueKey(
  q: Queryable,
  input: { org_id: string; name: string; scopes: readonly Scope[] },
  now: Date,
  opts: { tokenBytes?: Uint8Array } = {},
): Promise<IssuedKey> {
  const keyId = formatId("key", randomBytes(ID_RANDOM_BYTES));
  const token = formatKeyToken(opts.tokenBytes ?? randomBytes(TOKEN_RANDOM_BYTES));
  const prefix = tokenPrefix(token);
  await q.query(`INSERT INTO api_keys (key_id, org_id, name, prefix, token_hash, scopes, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    keyId,
    input.org_id,
    input.name,
    prefix,
    tokenHash(token),
    [...input.scopes],
    now,
  ]);
  return { key_id: keyId, prefix, scopes: [...input.scopes], token };
}

/** Every key of `orgId`, oldest first, revoked ones included. */
export async function listKeys(q: Queryable, orgId: string): Promise<ApiKeyRecord[]> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM api_keys WHERE org_id = $1 ORDER BY created_at, key_id`, [orgId]);
  return rows.map(toRecord);
}

/** Key `keyId` of `orgId` (never the token), or undefined. */
export async function getKey(q: Queryable, orgId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM api_keys WHERE org_id = $1 AND key_id = $2`, [orgId, keyId]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/**
 * Revokes key `keyId` of `orgId` at `now` (a key already revoked keeps its first revocation
 * time). Undefined when the organization has no such key.
 */
export async function revokeKey(q: Queryable, orgId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined> {
  const { rows } = await q.query<Row>(`UPDATE api_keys SET revoked_at = coalesce(revoked_at, $3) WHERE org_id = $1 AND key_id = $2 RETURNING ${COLUMNS}`, [
    orgId,
    keyId,
    now,
  ]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** The key a presented token belongs to (looked up by its hash), or undefined. */
export async function findKeyByToken(q: Queryable, token: string): Promise<KeyLookup | undefined> {
  const { rows } = await q.query<{
    key_id: string;
    org_id: string;
    org_type: OrgType;
    org_status: OrgStatus;
    scopes: Scope[];
    revoked: boolean;
  }>(
    `SELECT k.key_id, k.org_id, o.org_type, o.status AS org_status, k.scopes, k.revoked_at IS NOT NULL AS revoked
     FROM api_keys k JOIN orgs o ON o.org_id = k.org_id WHERE k.token_hash = $1`,
    [tokenHash(token)],
  );
  return rows[0];
}
