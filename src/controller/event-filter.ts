/**
 * Which informer events queue a reconcile (controller-runtime's GenerationChangedPredicate, plus
 * deletion): every add, delete and resync; an update only when the spec changed (a new
 * `metadata.generation`) or a deletion began or was cancelled. The controller's own writes (the
 * status subresource, the finalizer, the record-id annotation) change neither, so they do not
 * trigger another reconcile; the periodic resync catches anything else. Pure.
 */
import type { InformerEventType } from "../sources/kubernetes/informer.js";
import type { KubeObject } from "../sources/kubernetes/objects.js";

/** True when the event should queue the object's key. */
export function shouldEnqueue(type: InformerEventType, obj: KubeObject, old?: KubeObject): boolean {
  if (type !== "modified" || !old) return true;
  if (obj.metadata.generation !== old.metadata.generation) return true;
  return (obj.metadata.deletionTimestamp ?? "") !== (old.metadata.deletionTimestamp ?? "");
}
