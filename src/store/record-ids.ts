/**
 * Claims of ids that are unique across agents (table `record_ids` and `mandate_hashes`,
 * migrations/0322_record_claims.sql; docs/scale.md, "Keys"). The per-agent tables are keyed by
 * `agent_id` first, so a uniqueness that spans agents (a delegation or agreement id within an
 * organization, a mandate's identities) is a row of a claim table, written in the transaction
 * that stores the record, never on an ALLOW.
 *
 * Promises:
 * - A delegation or agreement id is claimed within its organization (migrations/
 *   0472_record_ids_per_org.sql; '' for records without one): two organizations may each hold
 *   the same id, one organization holds it once.
 * - `claimRecordId` claims `kind`/`id` in organization `orgId` for the agent whose row holds
 *   it: true when this call claimed it; false when it was claimed before (by this transaction,
 *   or one that committed; one still open is waited for, as a unique key would). The caller
 *   then treats the record as stored.
 * - `recordIdHolder` is the agent holding a claim in an organization.
 * - `moveRecordId` follows a change of the record's organization (or agent); false, moving
 *   nothing, when another agent holds the id in the new organization.
 * - `claimMandateHashes` claims a mandate's identities (across organizations: a mandate is one
 *   thing, whoever presents it); false when either was claimed before.
 */
import type { Queryable } from "./pool.js";

/** The kinds of record ids claimed. */
export type ClaimedKind = "delegation" | "agreement";

/** The key of an organization in `record_ids` ('' for none). */
const orgKey = (orgId: string | null): string => orgId ?? "";

/** Claims `kind` `id` of organization `orgId` for `agentId` (see the module comment). */
export async function claimRecordId(q: Queryable, kind: ClaimedKind, id: string, orgId: string | null, agentId: string): Promise<boolean> {
  const { rowCount } = await q.query("INSERT INTO record_ids (kind, record_id, org_id, agent_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", [
    kind,
    id,
    orgKey(orgId),
    agentId,
  ]);
  return rowCount === 1;
}

/** The agent holding the claim of `kind` `id` in organization `orgId`, or undefined. */
export async function recordIdHolder(q: Queryable, kind: ClaimedKind, orgId: string | null, id: string): Promise<string | undefined> {
  const { rows } = await q.query<{ agent_id: string }>("SELECT agent_id FROM record_ids WHERE org_id = $3 AND kind = $1 AND record_id = $2", [
    kind,
    id,
    orgKey(orgId),
  ]);
  return rows[0]?.agent_id;
}

/** Records that `kind` `id` of `agentId`, claimed in organization `from`, is now held in `orgId` (see the module comment). */
export async function moveRecordId(q: Queryable, kind: ClaimedKind, id: string, from: string | null, orgId: string | null, agentId: string): Promise<boolean> {
  const holder = orgKey(from) === orgKey(orgId) ? undefined : await recordIdHolder(q, kind, orgId, id);
  if (holder !== undefined && holder !== agentId) return false;
  if (holder === agentId) {
    await q.query("DELETE FROM record_ids WHERE org_id = $3 AND kind = $1 AND record_id = $2 AND agent_id = $4", [kind, id, orgKey(from), agentId]);
    return true;
  }
  await q.query("UPDATE record_ids SET org_id = $4, agent_id = $5 WHERE org_id = $3 AND kind = $1 AND record_id = $2", [
    kind,
    id,
    orgKey(from),
    orgKey(orgId),
    agentId,
  ]);
  return true;
}

/** Claims a recorded mandate's identities (what the issuer signed, the issuer JWT's text) for its delegation. */
export async function claimMandateHashes(
  q: Queryable,
  hashes: { mandate: string; issuerJwt: string },
  agentId: string,
  delegationId: string,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO mandate_hashes (kind, hash, agent_id, delegation_id) VALUES ('mandate', $1, $3, $4), ('issuer_jwt', $2, $3, $4)
     ON CONFLICT DO NOTHING`,
    [hashes.mandate, hashes.issuerJwt, agentId, delegationId],
  );
  return rowCount === 2;
}
