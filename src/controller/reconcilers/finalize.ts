/**
 * Deletion of a Writ resource: the records it owns (./ownership.ts: stored with this resource as
 * their owner, whatever its `writ.dev/record-id` annotation says now; and a record no resource
 * owns, stored before owners were recorded, only when the annotation AND the spec name it) are
 * revoked (never deleted: history is kept), each only when it is stored for the organization
 * the namespace is bound to, in one transaction
 * with its single `revocation` log entry and subscriber alerts; then the finalizer is removed so
 * the resource goes. A retried finalizer (or a second replica) revokes and logs nothing twice.
 */
import type { OwnerKind } from "../../core/crd/index.js";
import type { ResourceRef } from "../../sources/kubernetes/index.js";
import { withTransaction, revokeAndRecord, type RevocationTarget, claimRecord, claimsOfResource, ownerName, ownerOf } from "../../store/index.js";
import type { WritResource } from "../kinds.js";
import { hasFinalizer, removeFinalizer, resourceOwner, storedRecordId } from "../resource-writes.js";
import type { SingleOwnerKind } from "./ownership.js";
import type { ReconcileResult } from "../runner.js";
import type { ReconcileContext } from "./context.js";
import { controllerLogging, loggedText } from "./revocation-log.js";

/** `revoked_by` of a record the controller revoked because its resource was deleted (status messages say so). */
export const DELETION_REVOKER = "controller";

/** What a kind contributes to its deletion. */
export interface FinalizedKind {
  /** The resource kind (Events, the owner identity) and its API path. */
  kind: Exclude<OwnerKind, "Subscription">;
  ref: ResourceRef;
  /** The record word in messages, and the kind of record owned. */
  noun: SingleOwnerKind;
  /** The record id the resource's spec declares (not its annotation), when it declares one. */
  declared(obj: WritResource): Promise<string | undefined> | string | undefined;
  /** The stored record `id` of organization `org` (an id names a record within one): its agent, tenant and revocation state. */
  load(ctx: ReconcileContext, org: string, id: string): Promise<{ agentId: string; orgId: string | null; revokedAt: Date | null } | undefined>;
  /** What a deletion of record `id` (`stored`) of organization `org` revokes. */
  target(id: string, org: string, stored: { agentId: string }): RevocationTarget;
  /** Extra words for the Event (e.g. how much below it was revoked). */
  describe?(ids: readonly string[]): string;
  /** Follow-up after a revocation (requeue what depends on the record). */
  after?(ctx: ReconcileContext, obj: WritResource, id: string): void;
}

/** Finalizes `obj` of `k` (see the module comment). */
export async function finalizeRevoking(ctx: ReconcileContext, obj: WritResource, k: FinalizedKind): Promise<ReconcileResult> {
  if (!hasFinalizer(obj)) return {};
  const namespace = obj.metadata.namespace ?? "";
  const me = resourceOwner(obj, k.kind);
  // What this resource owns, whatever its annotation says; plus the annotated record when no
  // resource owns it (stored before owners were recorded) and the spec declares it in full.
  // Records and their owners are the namespace's organization's (an id names a record within one).
  const claims = await claimsOfResource(ctx.pool, k.noun, me.uid);
  const annotated = storedRecordId(obj);
  const org = claims.length > 0 || annotated !== undefined ? await ctx.bindings.labelledOrg(namespace) : undefined;
  const ids = claims.filter((c) => c.orgId === org).map((c) => c.recordId);
  let unowned: string | undefined;
  if (org !== undefined && annotated !== undefined && !ids.includes(annotated)) {
    const owner = await ownerOf(ctx.pool, k.noun, annotated, org);
    if (!owner && (await k.declared(obj)) === annotated) {
      unowned = annotated;
      ids.push(annotated);
    } else if (await k.load(ctx, org, annotated)) {
      const by = owner ? `it was created by another resource (${ownerName(owner)})` : "this resource's spec does not declare it";
      ctx.events.record(
        obj,
        k.kind,
        "Warning",
        "RECORD_NOT_OWNED",
        `deleted: ${k.noun} ${annotated} not revoked: ${by}; a resource acts only on the record it created`,
      );
    }
  }
  for (const c of claims) {
    if (c.orgId === org || !(await k.load(ctx, c.orgId, c.recordId))) continue;
    ctx.events.record(
      obj,
      k.kind,
      "Warning",
      "NAMESPACE_NOT_BOUND",
      `deleted: ${k.noun} ${c.recordId} not revoked: it is stored for another organization than namespace ${namespace}'s`,
    );
  }
  for (const id of org === undefined ? [] : ids) {
    const stored = await k.load(ctx, org as string, id);
    if (stored && !stored.revokedAt) {
      const resource = `${namespace}/${obj.metadata.name}`;
      const reason = `the ${k.kind} ${resource} was deleted`;
      const at = new Date(ctx.clock.now());
      // Only when this call revokes something is it logged: a retried finalizer or a second replica logs nothing.
      const { ids: revoked, logSequence: sequence } = await withTransaction(ctx.pool, async (c) => {
        // A record no resource owned becomes this one's (a concurrent claim by another wins: then nothing is revoked).
        if (id === unowned && !(await claimRecord(c, k.noun, id, me, org as string)).ok) return { ids: [] as string[], logSequence: null };
        const target = k.target(id, org as string, stored);
        return revokeAndRecord(c, target, { reason, by: "policy", storedBy: DELETION_REVOKER, at, resource }, controllerLogging(ctx, at));
      });
      const logged = revoked.length === 0 ? "already revoked" : loggedText(sequence);
      ctx.events.record(obj, k.kind, "Normal", "Revoked", `deleted: ${k.noun} ${id} revoked${k.describe?.(revoked) ?? ""}; ${logged}; its history is kept`);
      k.after?.(ctx, obj, id);
    }
  }
  await removeFinalizer(ctx.client, k.ref, obj);
  return {};
}
