/**
 * The transparency log entry of a revocation the controller makes (a Delegation's
 * `spec.state: revoked`, an IntentAgreement declared revoked, or the finalizer on deletion):
 * kind `revocation`, like the HTTP revocation paths (src/verify/revoke.ts), with where it came
 * from. Bodies:
 * - delegation: `{delegation_id, ids, reason, by, at, source: "kubernetes", resource}`;
 * - agreement: `{agreement_id, ids, reason, by, at, revocation?, mandate_hashes, source, resource}`.
 * `by` is `principal` (the principal's declared or signed act) or `policy` (the organization's
 * cluster acting for the principal: a deletion); `resource` is `<namespace>/<name>`.
 *
 * Promise: the caller appends inside the transaction that made the revocation, and only when the
 * store reports that this call newly revoked something (`ids` non-empty, `revocation` present,
 * `revokedNow`), so the entry and the revocation commit together, and a re-reconcile, a second
 * replica or a retried finalizer never appends a second entry (the store's locks serialise them
 * and the later one revokes nothing). Without a log signer nothing is appended.
 */
import type { PoolClient } from "pg";
import type { HashString } from "../../core/canonical/index.js";
import { mandateHash } from "../../core/agreement/index.js";
import type { Mandate } from "../../core/agreement/types.js";
import { appendLogEntries } from "../../store/log.js";
import { alertSubscribers, newEventId } from "../../store/subscriptions.js";
import type { ReconcileContext } from "./context.js";

/** Who revoked, as the log records it. */
export type ControllerRevokedBy = "principal" | "policy";

/** What every controller revocation entry carries. */
export interface RevocationFacts {
  ids: readonly string[];
  reason: string;
  by: ControllerRevokedBy;
  at: Date;
  /** `<namespace>/<name>` of the resource. */
  resource: string;
}

/** The body of a delegation's revocation entry. */
export function delegationRevocationBody(delegationId: string, f: RevocationFacts): Record<string, unknown> {
  return { delegation_id: delegationId, ids: [...f.ids], reason: f.reason, by: f.by, at: f.at.toISOString(), source: "kubernetes", resource: f.resource };
}

/** The body of an agreement's revocation entry (`revocation`: the principal's signed revocation, when carried). */
export function agreementRevocationBody(
  agreementId: string,
  f: RevocationFacts,
  mandateHashes: readonly HashString[],
  revocation?: unknown,
): Record<string, unknown> {
  return {
    agreement_id: agreementId,
    ids: [...f.ids],
    reason: f.reason,
    by: f.by,
    at: f.at.toISOString(),
    ...(revocation !== undefined ? { revocation } : {}),
    mandate_hashes: [...mandateHashes],
    source: "kubernetes",
    resource: f.resource,
  };
}

/**
 * Records a revocation the controller made, inside the caller's transaction, as the HTTP
 * revocation paths do: a `revocation` alert for the subscribers of every affected agent, and
 * ONE `revocation` log entry with `body`. Returns the entry's sequence, or undefined without a
 * log signer (the revocation stands and is alerted, unlogged).
 */
export async function appendRevocationEntry(client: PoolClient, ctx: ReconcileContext, body: Record<string, unknown>, now: Date): Promise<number | undefined> {
  await alertAffectedAgents(client, body, now);
  if (!ctx.logSigner) return undefined;
  const res = await appendLogEntries(client, [{ kind: "revocation", body }], ctx.logSigner, ctx.logOrigin !== undefined ? { now, origin: ctx.logOrigin } : { now });
  const entry = res.entries[0];
  if (!entry) throw new Error("the log append returned no entry");
  return entry.sequence;
}

/** The hashes of a stored agreement's mandates (what its agreement entry committed to), read in `client`'s transaction. */
export async function storedMandateHashes(client: PoolClient, agreementId: string): Promise<{ hashes: HashString[]; revocation: unknown }> {
  const { rows } = await client.query<{ mandates: unknown; revocation: unknown }>(
    "SELECT record->'mandates' AS mandates, record->'revocation' AS revocation FROM agreements WHERE agreement_id = $1",
    [agreementId],
  );
  const r = rows[0];
  const mandates = Array.isArray(r?.mandates) ? (r.mandates as Mandate[]) : [];
  return { hashes: mandates.map((m) => mandateHash(m)), revocation: r?.revocation ?? undefined };
}

/** How an Event says where a revocation was logged. */
export function loggedText(sequence: number | undefined): string {
  return sequence !== undefined ? `transparency log entry ${sequence}` : "not logged: SVC_LOG_SIGNING_SEED is unset";
}

/** Enqueues a `revocation` alert for the subscribers of each agent whose records `body` revokes. */
async function alertAffectedAgents(client: PoolClient, body: Record<string, unknown>, now: Date): Promise<void> {
  const ids = Array.isArray(body.ids) ? body.ids.filter((x): x is string => typeof x === "string") : [];
  const isAgreement = typeof body.agreement_id === "string";
  const { rows } = await client.query<{ agent_id: string }>(
    isAgreement
      ? "SELECT DISTINCT agent_id FROM agreements WHERE agreement_id = ANY($1::text[]) AND agent_id IS NOT NULL ORDER BY agent_id"
      : "SELECT DISTINCT agent_id FROM delegations WHERE delegation_id = ANY($1::text[]) AND agent_id IS NOT NULL ORDER BY agent_id",
    [ids],
  );
  const { at: _at, ...details } = body;
  for (const { agent_id } of rows) {
    await alertSubscribers(client, agent_id, { event_id: newEventId(), type: "revocation", agent_id, at: now.toISOString(), details });
  }
}
