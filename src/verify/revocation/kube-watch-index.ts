/**
 * The revocation index of a data plane that also watches Kubernetes: the same index (the
 * LISTEN channel plus the tables), which is stale also while the attached Kubernetes watch is
 * (./kube-watch.ts) UNLESS the controller's path vouches for revocation state
 * (./controller-path.ts: the controller observes the cluster and writes revocations to
 * Postgres, which this index hears). Verify reads `stale()` and fails closed with
 * REVOCATION_STATE_STALE; that code's meaning ("the revocation watch has been down longer than
 * its bound") covers both paths, and `staleReason()` says which one.
 *
 * `freshness()` says how revocation state is fresh: through the watch; through the controller
 * (`controller`, or `outage` while the API server is down for both); or `grace`, for `staleMs`
 * after the controller's path last vouched (as the watch itself is trusted for `staleMs` after
 * it goes down), which covers the moments after the API server returns and before the watches
 * have listed again. A revocation declared then is enforced within that bound, or verify fails
 * closed. Neither path fresh: stale. A data plane cut off from Postgres is stale whatever the
 * watch says (its LISTEN channel is down).
 */
import { RevocationIndex } from "./index.js";
import type { ControllerPath } from "./controller-path.js";

/** Something that can make revocation state stale. */
export interface StalenessSource {
  stale(): boolean;
  /** Why it is stale (undefined when it is not). */
  staleReason(): string | undefined;
}

/** How revocation state is fresh now, or why it is not. */
export interface Freshness {
  stale: boolean;
  /** The path it is fresh by (undefined when stale). */
  via?: "watch" | "controller" | "outage" | "grace";
  /** Why it is stale, or (degraded: fresh without the watch) why it is still fresh. */
  detail?: string;
}

const LISTEN_STALE = "revocation updates from Postgres (LISTEN writ_revocations) have not been received within their bound";

/** The index with an optional Kubernetes watch and controller path (see the module comment). */
export class WatchedRevocationIndex extends RevocationIndex {
  private watch: StalenessSource | undefined;
  private controller: ControllerPath | undefined;
  private graceMs = 0;
  private vouchedAt: number | undefined;

  /** Attaches the watch whose staleness this index reports too. */
  attachWatch(watch: StalenessSource): void {
    this.watch = watch;
  }

  /** Attaches the controller's path, trusted while the watch is down; `graceMs` after it last vouched. */
  attachControllerPath(path: ControllerPath, graceMs: number): void {
    this.controller = path;
    this.graceMs = graceMs;
  }

  /** How revocation state is fresh now (see the module comment). */
  freshness(now = this.clock()): Freshness {
    if (super.stale()) return { stale: true, detail: LISTEN_STALE };
    if (!this.watch?.stale()) return { stale: false, via: "watch" };
    const vouch = this.controller?.vouch(now);
    if (vouch) {
      this.vouchedAt = now;
      return { stale: false, via: vouch.path, detail: vouch.detail };
    }
    if (this.vouchedAt !== undefined && now - this.vouchedAt <= this.graceMs) {
      return {
        stale: false,
        via: "grace",
        detail: `neither the Kubernetes watch nor the controller's path is fresh; trusted for ${this.graceMs} ms after the controller's path last vouched (${now - this.vouchedAt} ms ago)`,
      };
    }
    return { stale: true, detail: this.watch.staleReason() };
  }

  /** Stale when the LISTEN channel is, or the watch is and the controller's path does not vouch. */
  override stale(): boolean {
    return this.freshness().stale;
  }

  /** Why revocation state is stale now, or undefined. */
  staleReason(): string | undefined {
    const f = this.freshness();
    return f.stale ? f.detail : undefined;
  }

  /** Why verify decides without its own watch (the controller's path vouches), or undefined. */
  degradedReason(): string | undefined {
    const f = this.freshness();
    return !f.stale && f.via !== "watch" ? f.detail : undefined;
  }
}
