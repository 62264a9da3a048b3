/**
 * What the controller last wrote (or found already written) as each resource's `.status`, kept
 * as a hash of its canonical JSON per uid. The informer's update events are filtered on
 * `metadata.generation` (./event-filter.ts), so without this a status written by someone else
 * (a hand-written `kubectl patch --subresource=status`, another tool) would stand until the
 * periodic resync; with it, such a change queues a reconcile at once, which writes the truth
 * back, while the controller's own writes do not queue anything.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../core/canonical/index.js";
import type { KubeObject } from "../sources/kubernetes/index.js";

function digest(status: unknown): string {
  try {
    return createHash("sha256")
      .update(canonicalJson(status ?? null))
      .digest("base64url");
  } catch {
    return "";
  }
}

/** The memo (see the module comment). */
export class StatusMemo {
  private readonly byUid = new Map<string, string>();

  /** Records `status` as the one the controller wants on the resource `uid`. */
  remember(uid: string | undefined, status: unknown): void {
    if (uid) this.byUid.set(uid, digest(status));
  }

  /** Forgets a resource (it is gone). */
  forget(uid: string | undefined): void {
    if (uid) this.byUid.delete(uid);
  }

  /** True when `obj`'s status is not the one the controller last wanted for it. */
  differs(obj: KubeObject & { status?: unknown }): boolean {
    const uid = obj.metadata.uid;
    return !uid || this.byUid.get(uid) !== digest(obj.status);
  }

  /** Number of resources remembered. */
  get size(): number {
    return this.byUid.size;
  }
}
