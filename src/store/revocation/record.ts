/**
 * Revoke and record: the ONE way a revocation of a delegation or an agreement is made, logged and
 * alerted, whoever makes it: the HTTP routes (the principal's signed revocation, an
 * organization's key, the admin token), the service's own REVOKE decision on the verify path,
 * and the controller (a declared `revoked` state, a deleted resource).
 *
 * Promises, inside the caller's transaction (all of it commits or none of it):
 * - `revokeAndRecord` revokes the record (a delegation with everything below it in any chain) and
 *   announces it with NOTIFY (the store's revoke functions); when something was newly revoked,
 *   it appends ONE transparency log entry of kind `revocation` with the typed body
 *   `RevocationLogBody` (when a log signer is given) and enqueues ONE `revocation` alert per
 *   affected agent for its subscribers (`details` = the body without `at`). A repeat revokes
 *   nothing, logs nothing and alerts nobody.
 * - `logAndAlertRevocation` is the logging and alerting half, for a revocation the store already made
 *   while storing a record (the controller's declared `revoked` state).
 * - An agreement's body names the hashes of its mandates as stored (which mandates the
 *   revocation ends) and carries the principal's signed revocation when there is one.
 */
import type { PoolClient } from "pg";
import { mandateHash, type AgreementRevocation, type Mandate } from "../../core/agreement/index.js";
import type { HashString } from "../../core/canonical/index.js";
import type { Signer } from "../../core/jose/index.js";
import { revokeAgreement } from "../agreements.js";
import { revokeDelegation } from "../delegations.js";
import { appendLogEntries, type LogAppendOptions } from "../log.js";
import { alertSubscribers, newEventId } from "../subscriptions.js";

/**
 * Who revoked, as the log and the alerts say: `principal` (the principal's own act: a signed
 * revocation, or a record the principal declared revoked), `policy` (acting for the principal: an
 * organization's key, the service's REVOKE decision, a resource deleted in the organization's
 * cluster), `service` (the service operator's admin token).
 */
export type RevokedBy = "principal" | "policy" | "service";

/** The body of a `revocation` log entry (and, without `at`, the `details` of its alerts). */
export interface RevocationLogBody {
  /** The revoked delegation (exactly one of `delegation_id` and `agreement_id`). */
  delegation_id?: string;
  agreement_id?: string;
  /** Every id newly revoked (a delegation's subtree). */
  ids: string[];
  reason: string;
  by: RevokedBy;
  /** RFC 3339. */
  at: string;
  /** An agreement's mandate hashes as stored. */
  mandate_hashes?: HashString[];
  /** The principal's signed revocation of an agreement, when it carried one. */
  revocation?: AgreementRevocation;
  /** Where it was declared, for revocations the controller made. */
  source?: "kubernetes";
  /** `<namespace>/<name>` of the resource. */
  resource?: string;
}

/**
 * What to revoke: a delegation by its organization and id (null: records without one; an id
 * not stored yet is revoked when stored in that organization), an agreement by its agent and id.
 */
export type RevocationTarget =
  { kind: "delegation"; orgId: string | null; id: string } | { kind: "agreement"; agentId: string; id: string; revocation?: AgreementRevocation };

/** The facts of one revocation. */
export interface RevocationFacts {
  reason: string;
  by: RevokedBy;
  at: Date;
  /** What the store records as `revoked_by` (default `by`). */
  storedBy?: string;
  /** A resource of the cluster the revocation was declared in. */
  resource?: string;
}

/** How it is logged: a signer (null: revoked and alerted, not logged) and the head's options. */
export interface RevocationLogging {
  signer: Signer | null;
  logOptions?: LogAppendOptions;
}

/** What a revocation did. */
export interface RecordedRevocation {
  /** Ids newly revoked (empty for a repeat). */
  ids: string[];
  /** False for an id the store does not know. */
  found: boolean;
  /** Agreements bound to the revoked delegations, or the revoked agreement. */
  agreementIds: string[];
  /** Sequence of the log entry, when one was appended. */
  logSequence: number | null;
}

/** Logs and alerts a revocation already made in `client`'s transaction; the log entry's sequence, or null without a signer. */
export async function logAndAlertRevocation(
  client: PoolClient,
  body: RevocationLogBody,
  logging: RevocationLogging,
  scope: RevocationScope,
): Promise<number | null> {
  let sequence: number | null = null;
  if (logging.signer) {
    const out = await appendLogEntries(
      client,
      [{ kind: "revocation", body: body as unknown as Record<string, unknown> }],
      logging.signer,
      logging.logOptions ?? { now: new Date(body.at) },
    );
    sequence = out.entries[0]?.sequence ?? null;
  }
  const { at, ...details } = body;
  for (const agentId of await affectedAgents(client, body, scope)) {
    await alertSubscribers(client, agentId, {
      event_id: newEventId(),
      type: "revocation",
      agent_id: agentId,
      at,
      details: details as unknown as Record<string, unknown>,
    });
  }
  return sequence;
}

/** Revokes `target`, then logs and alerts it (see the module comment). */
export async function revokeAndRecord(
  client: PoolClient,
  target: RevocationTarget,
  facts: RevocationFacts,
  logging: RevocationLogging,
): Promise<RecordedRevocation> {
  const acts = { reason: facts.reason, by: facts.storedBy ?? facts.by, at: facts.at };
  const origin = facts.resource !== undefined ? { source: "kubernetes" as const, resource: facts.resource } : {};
  const base = { reason: facts.reason, by: facts.by, at: facts.at.toISOString() };
  if (target.kind === "delegation") {
    const res = await revokeDelegation(client, target.orgId, target.id, acts);
    if (res.ids.length === 0) return { ids: [], found: res.found, agreementIds: [], logSequence: null };
    const body: RevocationLogBody = { delegation_id: target.id, ids: res.ids, ...base, ...origin };
    const logSequence = await logAndAlertRevocation(client, body, logging, { orgId: target.orgId });
    return { ids: res.ids, found: true, agreementIds: await boundAgreements(client, target.orgId, res.ids), logSequence };
  }
  const res = await revokeAgreement(client, target.agentId, target.id, { ...acts, ...(target.revocation ? { revocation: target.revocation } : {}) });
  if (res.ids.length === 0) return { ids: [], found: res.found, agreementIds: [], logSequence: null };
  const stored = await storedAgreementFacts(client, target.agentId, target.id);
  const revocation = target.revocation ?? stored.revocation;
  const body: RevocationLogBody = {
    agreement_id: target.id,
    ids: res.ids,
    ...base,
    mandate_hashes: stored.mandateHashes,
    ...(revocation ? { revocation } : {}),
    ...origin,
  };
  const logSequence = await logAndAlertRevocation(client, body, logging, { agentId: target.agentId });
  return { ids: res.ids, found: true, agreementIds: res.ids, logSequence };
}

/** Whose records a revocation's ids name: an agreement's agent, or a delegation subtree's organization. */
export type RevocationScope = { agentId: string } | { orgId: string | null };

/** The agents whose subscribers hear of `body`'s revocation (its ids read within `scope`). */
async function affectedAgents(client: PoolClient, body: RevocationLogBody, scope: RevocationScope): Promise<string[]> {
  if ("agentId" in scope) return [scope.agentId];
  const { rows } = await client.query<{ agent_id: string }>(
    "SELECT DISTINCT agent_id FROM delegations WHERE delegation_id = ANY($1::text[]) AND org_id IS NOT DISTINCT FROM $2 ORDER BY agent_id",
    [body.ids, scope.orgId],
  );
  return rows.map((r) => r.agent_id);
}

async function boundAgreements(client: PoolClient, orgId: string | null, delegationIds: readonly string[]): Promise<string[]> {
  const { rows } = await client.query<{ agreement_id: string }>(
    `SELECT a.agreement_id FROM delegations d JOIN agreements a ON a.agent_id = d.agent_id AND a.delegation_id = d.delegation_id
     WHERE d.delegation_id = ANY($1::text[]) AND d.org_id IS NOT DISTINCT FROM $2 ORDER BY a.agreement_id`,
    [delegationIds, orgId],
  );
  return rows.map((r) => r.agreement_id);
}

/** The hashes of a stored agreement's mandates and its signed revocation, read in `client`'s transaction. */
export async function storedAgreementFacts(
  client: PoolClient,
  agentId: string,
  agreementId: string,
): Promise<{ mandateHashes: HashString[]; revocation: AgreementRevocation | undefined }> {
  const { rows } = await client.query<{ mandates: unknown; revocation: AgreementRevocation | null }>(
    "SELECT record->'mandates' AS mandates, record->'revocation' AS revocation FROM agreements WHERE agent_id = $1 AND agreement_id = $2",
    [agentId, agreementId],
  );
  const r = rows[0];
  const mandates = Array.isArray(r?.mandates) ? (r.mandates as Mandate[]) : [];
  return { mandateHashes: mandates.map((m) => mandateHash(m)), revocation: r?.revocation ?? undefined };
}
