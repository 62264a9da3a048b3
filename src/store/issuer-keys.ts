/**
 * Issuer keys: public keys a wallet organization registers as trusted to issue payment
 * mandates (table `issuer_keys`, migrations/0130_mandates.sql; docs/mandates.md).
 *
 * Promises: a key is stored once (by RFC 7638 thumbprint, across organizations: a verified
 * mandate has one issuer organization) under one `kid` (the JWK's own `kid` when it has one,
 * else its thumbprint id), never deleted; revoking it is final. A `kid` is unique within its
 * organization only (migrations/0251_issuer_kid_per_org.sql): another wallet holding the same
 * kid never blocks a registration, and `trustedIssuerKeys` answers every live key of that kid
 * (the mandate verifier keeps the one whose signature verifies).
 * A registration whose key is PROVEN (a verified proof of possession,
 * src/core/registry/key-proof.ts) displaces the live UNPROVEN holder of the same key in another
 * organization (a squat) in the same transaction: that row is kept but revoked for good, with
 * `displaced_at` and `displaced_by` (the proving organization). A proven holder is never
 * displaced.
 * `trustedIssuerKeys` answers only live keys of active wallet organizations, so a key stops
 * being trusted the moment it or its organization is no longer.
 */
import type { TrustedIssuerKey } from "../core/mandates/index.js";
import type { PublicJwk } from "../core/jose/index.js";
import type { Queryable } from "./pool.js";

/** An issuer key as the API shows it. */
export interface IssuerKeyRecord {
  kid: string;
  thumbprint: string;
  org_id: string;
  public_key: PublicJwk;
  /** RFC 3339, UTC. */
  created_at: string;
  /** RFC 3339, UTC, or null while trusted. */
  revoked_at: string | null;
  /** Present (true) when the registration proved possession of the key. */
  key_proven?: true;
  /** The organization whose proven registration of this key displaced this one (then revoked). */
  displaced_by?: string;
}

interface Row {
  kid: string;
  thumbprint: string;
  org_id: string;
  public_key: PublicJwk;
  created_at: Date;
  revoked_at: Date | null;
  key_proven: boolean;
  displaced_by: string | null;
}

const COLUMNS = "kid, thumbprint, org_id, public_key, created_at, revoked_at, key_proven, displaced_by";

function toRecord(r: Row): IssuerKeyRecord {
  return {
    kid: r.kid,
    thumbprint: r.thumbprint,
    org_id: r.org_id,
    public_key: r.public_key,
    created_at: r.created_at.toISOString(),
    revoked_at: r.revoked_at?.toISOString() ?? null,
    ...(r.key_proven ? { key_proven: true as const } : {}),
    ...(r.displaced_by !== null ? { displaced_by: r.displaced_by } : {}),
  };
}

/** Stores a new issuer key, or reports that its kid (in this organization) or its key (anywhere) is already registered. */
export async function insertIssuerKey(
  q: Queryable,
  input: { kid: string; thumbprint: string; orgId: string; publicKey: PublicJwk; keyProven?: boolean },
  now: Date,
): Promise<{ ok: true; key: IssuerKeyRecord; displaced?: { org_id: string; kid: string } } | { ok: false; conflict: "kid" | "key" }> {
  const proven = input.keyProven === true;
  let displaced: { org_id: string; kid: string } | undefined;
  if (proven && (await q.query("SELECT 1 FROM issuer_keys WHERE org_id = $1 AND kid = $2", [input.orgId, input.kid])).rows.length === 0) {
    const { rows: moved } = await q.query<{ org_id: string; kid: string }>(
      `UPDATE issuer_keys SET revoked_at = coalesce(revoked_at, $2), displaced_at = $2, displaced_by = $3
       WHERE thumbprint = $1 AND displaced_at IS NULL AND NOT key_proven AND org_id <> $3 RETURNING org_id, kid`,
      [input.thumbprint, now, input.orgId],
    );
    displaced = moved[0];
  }
  const { rows } = await q.query<Row>(
    `INSERT INTO issuer_keys (kid, thumbprint, org_id, public_key, created_at, key_proven) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
    [input.kid, input.thumbprint, input.orgId, JSON.stringify(input.publicKey), now, proven],
  );
  if (rows[0]) return displaced ? { ok: true, key: toRecord(rows[0]), displaced } : { ok: true, key: toRecord(rows[0]) };
  const taken = await q.query<{ same_kid: boolean }>(
    "SELECT (org_id = $3 AND kid = $1) AS same_kid FROM issuer_keys WHERE (org_id = $3 AND kid = $1) OR (thumbprint = $2 AND displaced_at IS NULL) ORDER BY 1 DESC LIMIT 1",
    [input.kid, input.thumbprint, input.orgId],
  );
  return { ok: false, conflict: taken.rows[0]?.same_kid === false ? "key" : "kid" };
}

/** The issuer keys of organization `orgId`, oldest first. */
export async function listIssuerKeys(q: Queryable, orgId: string): Promise<IssuerKeyRecord[]> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM issuer_keys WHERE org_id = $1 ORDER BY created_at, kid`, [orgId]);
  return rows.map(toRecord);
}

/** Revokes issuer key `kid` of `orgId` at `now` (idempotent); undefined when it is not theirs. */
export async function revokeIssuerKey(q: Queryable, orgId: string, kid: string, now: Date): Promise<IssuerKeyRecord | undefined> {
  const { rows } = await q.query<Row>(`UPDATE issuer_keys SET revoked_at = coalesce(revoked_at, $3) WHERE org_id = $1 AND kid = $2 RETURNING ${COLUMNS}`, [
    orgId,
    kid,
    now,
  ]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** The live keys `kid` of active wallet organizations (one per organization at most), as the verifier takes them (empty: not trusted). */
export async function trustedIssuerKeys(q: Queryable, kid: string): Promise<TrustedIssuerKey[]> {
  const { rows } = await q.query<{ kid: string; org_id: string; public_key: PublicJwk }>(
    `SELECT k.kid, k.org_id, k.public_key FROM issuer_keys k JOIN orgs o ON o.org_id = k.org_id
     WHERE k.kid = $1 AND k.revoked_at IS NULL AND o.status = 'active' AND o.org_type = 'wallet'`,
    [kid],
  );
  return rows.map((r) => ({ kid: r.kid, orgId: r.org_id, publicKey: r.public_key }));
}
