/**
 * Claims of ids that are unique across agents (table `record_ids` and `mandate_hashes`,
 * migrations/0322_record_claims.sql; docs/scale.md, "Keys"). The per-agent tables are keyed by
 * `agent_id` first, so a uniqueness that spans agents (a delegation or agreement id, a
 * mandate's identities) is a row of a claim table, written in the transaction that stores the
 * record, never on an ALLOW.
 *
 * Promises:
 * - `claimRecordId` claims `kind`/`id` for the agent (and organization) whose row holds it: true
 *   when this call claimed it; false when it was claimed before (by this transaction, or one
 *   that committed; one still open is waited for, as a unique key would). The caller then
 *   treats the record as stored.
 * - `recordIdHolder` is the agent holding a claim.
 * - `moveRecordId` follows a change of the record's agent or organization.
 * - `claimMandateHashes` claims a mandate's identities; false when either was claimed before.
 */
import type { Queryable } from "./pool.js";

/** The kinds of record ids claimed. */
export type ClaimedKind = "delegation" | "agreement";

/** Claims `kind` `id` for `agentId` of `orgId` (see the module comment). */
export async function claimRecordId(q: Queryable, kind: ClaimedKind, id: string, orgId: string | null, agentId: string): Promise<boolean> {
  const { rowCount } = await q.query("INSERT INTO record_ids (kind, record_id, org_id, agent_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", [
    kind,
    id,
    orgId,
    agentId,
  ]);
  return rowCount === 1;
}

/** The agent holding the claim of `kind` `id`, or undefined. */
export async function recordIdHolder(q: Queryable, kind: ClaimedKind, id: string): Promise<string | undefined> {
  const { rows } = await q.query<{ agent_id: string }>("SELECT agent_id FROM record_ids WHERE kind = $1 AND record_id = $2", [kind, id]);
  return rows[0]?.agent_id;
}

/** Records that `kind` `id` is now held by `agentId` of `orgId`. */
export async function moveRecordId(q: Queryable, kind: ClaimedKind, id: string, orgId: string | null, agentId: string): Promise<void> {
  await q.query("UPDATE record_ids SET org_id = $3, agent_id = $4 WHERE kind = $1 AND record_id = $2", [kind, id, orgId, agentId]);
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
