/**
 * Deletion of a Writ resource: its stored record is revoked (never deleted: history is kept),
 * only when it is stored for the organization the namespace is bound to, in one transaction
 * with its single `revocation` log entry and subscriber alerts; then the finalizer is removed so
 * the resource goes. A retried finalizer (or a second replica) revokes and logs nothing twice.
 */
import type { ResourceRef } from "../../sources/kubernetes/objects.js";
import { withTransaction } from "../../store/pool.js";
import { revokeAndRecord, type RevocationTarget } from "../../store/revocation-record.js";
import type { WritResource } from "../kinds.js";
import { hasFinalizer, removeFinalizer, storedRecordId } from "../resource-writes.js";
import type { ReconcileResult } from "../runner.js";
import type { ReconcileContext } from "./context.js";
import { controllerLogging, loggedText } from "./revocation-log.js";

/** `revoked_by` of a record the controller revoked because its resource was deleted (status messages say so). */
export const DELETION_REVOKER = "controller";

/** What a kind contributes to its deletion. */
export interface FinalizedKind {
  /** The resource kind (Events) and its API path. */
  kind: string;
  ref: ResourceRef;
  /** The record word in messages ("delegation", "agreement"). */
  noun: string;
  /** The stored record's tenant and revocation state, when stored. */
  load(ctx: ReconcileContext, id: string): Promise<{ orgId: string | null; revokedAt: Date | null } | undefined>;
  /** What a deletion of record `id` revokes. */
  target(id: string): RevocationTarget;
  /** Extra words for the Event (e.g. how much below it was revoked). */
  describe?(ids: readonly string[]): string;
  /** Follow-up after a revocation (requeue what depends on the record). */
  after?(ctx: ReconcileContext, obj: WritResource, id: string): void;
}

/** Finalizes `obj` of `k` (see the module comment). */
export async function finalizeRevoking(ctx: ReconcileContext, obj: WritResource, k: FinalizedKind): Promise<ReconcileResult> {
  if (!hasFinalizer(obj)) return {};
  const namespace = obj.metadata.namespace ?? "";
  const id = storedRecordId(obj);
  if (id !== undefined) {
    const stored = await k.load(ctx, id);
    const org = await ctx.bindings.labelledOrg(namespace);
    if (stored && org !== undefined && stored.orgId === org) {
      if (!stored.revokedAt) {
        const resource = `${namespace}/${obj.metadata.name}`;
        const reason = `the ${k.kind} ${resource} was deleted`;
        const at = new Date(ctx.clock.now());
        // Only when this call revokes something is it logged: a retried finalizer or a second replica logs nothing.
        const { ids, logSequence: sequence } = await withTransaction(ctx.pool, (c) =>
          revokeAndRecord(c, k.target(id), { reason, by: "policy", storedBy: DELETION_REVOKER, at, resource }, controllerLogging(ctx, at)),
        );
        const logged = ids.length === 0 ? "already revoked" : loggedText(sequence);
        ctx.events.record(obj, k.kind, "Normal", "Revoked", `deleted: ${k.noun} ${id} revoked${k.describe?.(ids) ?? ""}; ${logged}; its history is kept`);
        k.after?.(ctx, obj, id);
      }
    } else if (stored) {
      ctx.events.record(obj, k.kind, "Warning", "NAMESPACE_NOT_BOUND", `deleted: ${k.noun} ${id} not revoked: it is stored for another organization than namespace ${namespace}'s`);
    }
  }
  await removeFinalizer(ctx.client, k.ref, obj);
  return {};
}
