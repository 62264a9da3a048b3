/**
 * Acknowledgement keys: the public keys a payment-side organization registers to sign
 * acknowledgements (table `ack_keys`, migrations/0250_ack_keys.sql), and the payment-side
 * parties of an agreement as the registry confirms them.
 *
 * Promises:
 * - A key is held per organization (by RFC 7638 thumbprint); registering it again is a 409 for
 *   that organization only, never for another one. It is never deleted; revoking it is final.
 * - `paymentParties` answers the organizations an agreement names: a verifying acknowledgement
 *   of a current mandate hash, role merchant/psp/issuer, whose `id` is an active organization
 *   that holds the acknowledgement's key live here (src/core/agreement/parties.ts). A key
 *   revoked later names nobody from then on, whatever was stored before.
 * - `unregisteredPartyClaims` lists the acknowledgements of a record to store that claim an
 *   organization without its live key: the record stores refuse them (ACK_KEY_UNREGISTERED).
 */
import { currentPartyClaims, partyClaims, type IntentAgreement, type PartyClaim } from "../core/agreement/index.js";
import type { HashString } from "../core/canonical/index.js";
import type { PublicJwk } from "../core/jose/index.js";
import type { Queryable } from "./pool.js";

/** An acknowledgement key as the API shows it. */
export interface AckKeyRecord {
  thumbprint: HashString;
  org_id: string;
  public_key: PublicJwk;
  /** RFC 3339, UTC. */
  created_at: string;
  /** RFC 3339, UTC, or null while live. */
  revoked_at: string | null;
}

interface Row {
  thumbprint: HashString;
  org_id: string;
  public_key: PublicJwk;
  created_at: Date;
  revoked_at: Date | null;
}

const COLUMNS = "thumbprint, org_id, public_key, created_at, revoked_at";

function toRecord(r: Row): AckKeyRecord {
  return {
    thumbprint: r.thumbprint,
    org_id: r.org_id,
    public_key: r.public_key,
    created_at: r.created_at.toISOString(),
    revoked_at: r.revoked_at?.toISOString() ?? null,
  };
}

/** Stores a new acknowledgement key of `orgId`, or reports that this organization holds it already. */
export async function insertAckKey(
  q: Queryable,
  input: { orgId: string; thumbprint: HashString; publicKey: PublicJwk },
  now: Date,
): Promise<{ ok: true; key: AckKeyRecord } | { ok: false }> {
  const { rows } = await q.query<Row>(
    `INSERT INTO ack_keys (org_id, thumbprint, public_key, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
    [input.orgId, input.thumbprint, JSON.stringify(input.publicKey), now],
  );
  return rows[0] ? { ok: true, key: toRecord(rows[0]) } : { ok: false };
}

/** The acknowledgement keys of `orgId`, oldest first, revoked ones included. */
export async function listAckKeys(q: Queryable, orgId: string): Promise<AckKeyRecord[]> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM ack_keys WHERE org_id = $1 ORDER BY created_at, thumbprint`, [orgId]);
  return rows.map(toRecord);
}

/** Revokes key `thumbprint` of `orgId` at `now` (idempotent); undefined when it holds no such key. */
export async function revokeAckKey(q: Queryable, orgId: string, thumbprint: string, now: Date): Promise<AckKeyRecord | undefined> {
  const { rows } = await q.query<Row>(`UPDATE ack_keys SET revoked_at = coalesce(revoked_at, $3) WHERE org_id = $1 AND thumbprint = $2 RETURNING ${COLUMNS}`, [
    orgId,
    thumbprint,
    now,
  ]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** The `org_id thumbprint` pairs of `claims` that are live keys of active organizations. */
async function registered(q: Queryable, claims: ReadonlyArray<{ orgId: string; thumbprint: HashString | undefined }>): Promise<Set<string>> {
  const pairs = claims.filter((c): c is { orgId: string; thumbprint: HashString } => c.thumbprint !== undefined);
  if (pairs.length === 0) return new Set();
  const { rows } = await q.query<{ org_id: string; thumbprint: string }>(
    `SELECT k.org_id, k.thumbprint FROM ack_keys k JOIN orgs o ON o.org_id = k.org_id
     JOIN unnest($1::text[], $2::text[]) AS c (org_id, thumbprint) ON c.org_id = k.org_id AND c.thumbprint = k.thumbprint
     WHERE k.revoked_at IS NULL AND o.status = 'active'`,
    [pairs.map((c) => c.orgId), pairs.map((c) => c.thumbprint)],
  );
  return new Set(rows.map((r) => `${r.org_id} ${r.thumbprint}`));
}

/** The organizations `agreement` names as payment-side parties (see the module comment). */
export async function paymentParties(q: Queryable, agreement: Pick<IntentAgreement, "agreement_id" | "mandates" | "acknowledgements">): Promise<Set<string>> {
  const claims = await currentPartyClaims(agreement);
  if (claims.length === 0) return new Set();
  const live = await registered(q, claims);
  return new Set(claims.filter((c) => live.has(`${c.orgId} ${c.thumbprint}`)).map((c) => c.orgId));
}

/**
 * The acknowledgements of `agreement` that claim an organization (role merchant/psp/issuer,
 * `id` an org id) but are not signed by a live key that organization registered: whatever
 * mandate hash they name, and whether or not their signature verifies.
 */
export async function unregisteredPartyClaims(
  q: Queryable,
  agreement: Pick<IntentAgreement, "agreement_id" | "mandates" | "acknowledgements">,
): Promise<PartyClaim[]> {
  const claims = await partyClaims(agreement);
  if (claims.length === 0) return [];
  const live = await registered(q, claims);
  return claims.filter((c) => !c.verifies || c.thumbprint === undefined || !live.has(`${c.orgId} ${c.thumbprint}`));
}

/** The refusal text of `claims` (from `unregisteredPartyClaims`), naming each acknowledgement. */
export function unregisteredClaimsText(claims: readonly PartyClaim[]): string {
  const each = claims.map((c) =>
    !c.verifies
      ? `acknowledgements[${c.index}] (role ${c.role}, id ${c.orgId}) does not verify with its own public_key`
      : `acknowledgements[${c.index}] (role ${c.role}) names organization ${c.orgId}, but its key ${c.thumbprint ?? "?"} is not a live acknowledgement key of that organization (POST /v1/orgs/${c.orgId}/ack-keys)`,
  );
  return `${each.join("; ")}: an acknowledgement names an organization only when signed by a key that organization registered`;
}
