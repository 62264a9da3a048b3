/**
 * The revocation index of a data plane that also watches Kubernetes: the same index (the
 * LISTEN channel plus the tables), which is stale also while the attached Kubernetes watch is
 * (./kube-watch.ts). Verify reads `stale()` and fails closed with REVOCATION_STATE_STALE; that
 * code's meaning ("the revocation watch has been down longer than its bound") covers both
 * watches, and `staleReason()` says which one.
 */
import { RevocationIndex } from "./index.js";

/** Something that can make revocation state stale. */
export interface StalenessSource {
  stale(): boolean;
  /** Why it is stale (undefined when it is not). */
  staleReason(): string | undefined;
}

/** The index with an optional Kubernetes watch (see the module comment). */
export class WatchedRevocationIndex extends RevocationIndex {
  private watch: StalenessSource | undefined;

  /** Attaches the watch whose staleness this index reports too. */
  attachWatch(watch: StalenessSource): void {
    this.watch = watch;
  }

  /** Stale when the LISTEN channel or the attached watch is. */
  override stale(): boolean {
    const own = super.stale();
    const watch = this.watch?.stale() ?? false;
    return own || watch;
  }

  /** Why revocation state is stale now, or undefined. */
  staleReason(): string | undefined {
    const watch = this.watch?.stale() ? this.watch.staleReason() : undefined;
    if (watch !== undefined) return watch;
    return super.stale() ? "revocation updates from Postgres (LISTEN writ_revocations) have not been received within their bound" : undefined;
  }
}
