/**
 * Revoking a stored delegation once the caller is authorized: the one path of
 * `DELETE /svc/delegations/{id}` (./index.ts) and of the principal's portal button
 * (`POST /v1/portal/delegations/{id}/revoke`, src/api/routes/portal/records.ts).
 *
 * Promise: a delegation already revoked answers the repeat (nothing logged or alerted); one
 * declared `revocable: false` is a 409; otherwise it and everything below it are revoked, ONE
 * `revocation` log entry is appended and the subscribers of every affected agent alerted, in
 * one transaction (src/store/revocation/record.ts), then this process's revocation index
 * learns the ids at once (the others through NOTIFY) and the act is logged. 503 without the log
 * signing key (nothing revoked then).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { type StoredDelegation, withTransaction, revokeAndRecord, type RevokedBy } from "../../../store/index.js";
import { ApiError } from "../../errors.js";
import { logAppendOptions, logSignerOf } from "../shared/registry-log.js";

/** The answer of a revocation (or of a repeat: `revoked: false`, nothing else). */
export interface DelegationRevokeAnswer {
  revoked: boolean;
  delegation_id: string;
  revoked_ids: string[];
  agreement_ids: string[];
  log_sequence: number | null;
}

/** JSON schema of `DelegationRevokeAnswer`. */
export const REVOKE_ANSWER_SCHEMA = {
  type: "object",
  required: ["revoked", "delegation_id", "revoked_ids", "agreement_ids", "log_sequence"],
  properties: {
    revoked: { type: "boolean", description: "false for a delegation that was already revoked (nothing changed)" },
    delegation_id: { type: "string" },
    revoked_ids: { type: "array", items: { type: "string" }, description: "The delegation and everything below it in any chain, newly revoked" },
    agreement_ids: { type: "array", items: { type: "string" }, description: "Agreements bound to the revoked delegations" },
    log_sequence: { type: ["integer", "null"], description: "Sequence of the `revocation` transparency log entry" },
  },
} as const;

/** Who revokes and why. */
export interface RevokeAct {
  by: RevokedBy;
  reason: string;
  /** The principal whose portal session revoked (logged). */
  principalId?: string;
}

/**
 * Revokes delegation `id` (`stored`: its row, undefined when not stored; then `orgId` names
 * the organization of the id, known only as a link there) as `act` says (see the module comment).
 */
export async function revokeStoredDelegation(
  app: FastifyInstance,
  request: FastifyRequest,
  id: string,
  stored: StoredDelegation | undefined,
  act: RevokeAct,
  orgId: string | null = null,
): Promise<DelegationRevokeAnswer> {
  const repeat = { revoked: false, delegation_id: id, revoked_ids: [], agreement_ids: [], log_sequence: null };
  if (stored?.revokedAt) return repeat;
  if (stored && stored.record.revocable === false) throw new ApiError("DELEGATION_NOT_REVOCABLE");
  const signer = logSignerOf(app);
  const now = app.clock();
  // An id names a delegation within its organization: the revocation (and its cascade) stays there.
  const scope = stored ? stored.orgId : orgId;
  const r = await withTransaction(app.requireDb(), (client) =>
    revokeAndRecord(
      client,
      { kind: "delegation", orgId: scope, id },
      { reason: act.reason, by: act.by, at: now },
      { signer, logOptions: logAppendOptions(app, now) },
    ),
  );
  if (!r.found) throw new ApiError("DELEGATION_NOT_FOUND");
  for (const x of r.ids) app.verifyRuntime?.index.markDelegationRevoked(scope, x);
  request.log.info(
    {
      delegation_id: id,
      ...(stored ? { agent_id: stored.agentId } : {}),
      by: act.by,
      ...(act.principalId ? { principal_id: act.principalId, via: "portal session" } : {}),
      revoked_ids: r.ids,
    },
    "delegation revoked",
  );
  if (r.ids.length === 0) return repeat;
  return { revoked: true, delegation_id: id, revoked_ids: r.ids, agreement_ids: r.agreementIds, log_sequence: r.logSequence };
}
