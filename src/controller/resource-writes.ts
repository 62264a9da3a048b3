/**
 * The controller's writes to its resources: `.status` through the status subresource (skipped
 * when it would change nothing), and the finalizer with the record-id annotation (optimistic
 * concurrency: the resourceVersion read goes with the patch, so a stale read fails with 409
 * Conflict and the key is retried).
 */
import { ownerIdentity, type OwnerKind } from "../core/crd/index.js";
import { type KubeTransport, JSON_PATCH, MERGE_PATCH, isKubeError, resourcePath, type ResourceRef } from "../sources/kubernetes/index.js";
import { statusUnchanged } from "./conditions.js";
import type { RecordOwner } from "../store/index.js";
import { RECORD_ID_ANNOTATION, REVOKE_FINALIZER, type WritResource } from "./kinds.js";

function objectRef(ref: ResourceRef, obj: WritResource): ResourceRef {
  return { ...ref, namespace: obj.metadata.namespace ?? "" };
}

/**
 * Writes `status` as the resource's whole `.status` through the status subresource, unless it
 * equals the cached one. True when written; false when skipped or the resource is gone.
 */
export async function writeStatus(client: KubeTransport, ref: ResourceRef, obj: WritResource, status: Record<string, unknown>): Promise<boolean> {
  if (statusUnchanged(obj.status, status)) return false;
  try {
    await client.request("PATCH", resourcePath(objectRef(ref, obj), obj.metadata.name, "status"), {
      body: [{ op: "add", path: "/status", value: status }],
      contentType: JSON_PATCH,
    });
    return true;
  } catch (err) {
    if (isKubeError(err, "NOT_FOUND")) return false;
    throw err;
  }
}

/** True when the resource carries the revoke finalizer. */
export function hasFinalizer(obj: WritResource): boolean {
  return (obj.metadata.finalizers ?? []).includes(REVOKE_FINALIZER);
}

/**
 * The identity a resource's records are owned by (src/store/record-owners.ts): its namespace,
 * name and uid. The uid tells a resource from a later one of the same name; the local source
 * derives it from the file that declares the resource (src/sources/local/sync.ts).
 */
export function resourceOwner(obj: WritResource, kind: OwnerKind): RecordOwner {
  const namespace = obj.metadata.namespace ?? "";
  // `uid` holds the owner identity (kind/namespace/name, ../core/crd/owner.ts), not the object's uid.
  return { namespace, name: obj.metadata.name, uid: ownerIdentity(kind, namespace, obj.metadata.name) };
}

/** The record id the resource stored (its annotation), if any: a hint only, never proof of ownership (the stored owner is). */
export function storedRecordId(obj: WritResource): string | undefined {
  const v = obj.metadata.annotations?.[RECORD_ID_ANNOTATION];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/**
 * Adds the finalizer and (when given) the record-id annotation unless they are there already.
 * Returns the resource as it is now (the patched one, with its new resourceVersion).
 */
export async function ensureFinalizer(client: KubeTransport, ref: ResourceRef, obj: WritResource, recordId?: string): Promise<WritResource> {
  if (hasFinalizer(obj) && (recordId === undefined || storedRecordId(obj) === recordId)) return obj;
  const finalizers = hasFinalizer(obj) ? obj.metadata.finalizers : [...(obj.metadata.finalizers ?? []), REVOKE_FINALIZER];
  const metadata: Record<string, unknown> = { finalizers, resourceVersion: obj.metadata.resourceVersion };
  if (recordId !== undefined) metadata.annotations = { [RECORD_ID_ANNOTATION]: recordId };
  return client.request<WritResource>("PATCH", resourcePath(objectRef(ref, obj), obj.metadata.name), { body: { metadata }, contentType: MERGE_PATCH });
}

/** Removes the finalizer (the resource then goes). A resource already gone is fine. */
export async function removeFinalizer(client: KubeTransport, ref: ResourceRef, obj: WritResource): Promise<void> {
  if (!hasFinalizer(obj)) return;
  const finalizers = (obj.metadata.finalizers ?? []).filter((f) => f !== REVOKE_FINALIZER);
  try {
    await client.request("PATCH", resourcePath(objectRef(ref, obj), obj.metadata.name), {
      body: { metadata: { finalizers, resourceVersion: obj.metadata.resourceVersion } },
      contentType: MERGE_PATCH,
    });
  } catch (err) {
    if (!isKubeError(err, "NOT_FOUND")) throw err;
  }
}
