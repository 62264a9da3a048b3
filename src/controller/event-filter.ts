/**
 * Which informer events queue a reconcile (controller-runtime's GenerationChangedPredicate, plus
 * deletion, plus foreign status writes): every add, delete and resync; an update when the spec
 * changed (a new `metadata.generation`), a deletion began or was cancelled, or `.status` changed
 * to something the controller did not write (./status-memo.ts: a hand-written status is
 * corrected at once, not at the next resync). The controller's own writes (the status
 * subresource, the finalizer, the record-id annotation) queue nothing. Pure apart from the memo.
 */
import { canonicalJson } from "../core/canonical/index.js";
import type { InformerEventType, KubeObject } from "../sources/kubernetes/index.js";
import type { StatusMemo } from "./status-memo.js";

type WithStatus = KubeObject & { status?: unknown };

function statusChanged(obj: WithStatus, old: WithStatus): boolean {
  try {
    return canonicalJson(obj.status ?? null) !== canonicalJson(old.status ?? null);
  } catch {
    return true;
  }
}

/** True when the event should queue the object's key. */
export function shouldEnqueue(type: InformerEventType, obj: WithStatus, old?: WithStatus, memo?: StatusMemo): boolean {
  if (type !== "modified" || !old) return true;
  if (obj.metadata.generation !== old.metadata.generation) return true;
  if ((obj.metadata.deletionTimestamp ?? "") !== (old.metadata.deletionTimestamp ?? "")) return true;
  return memo !== undefined && statusChanged(obj, old) && memo.differs(obj);
}
