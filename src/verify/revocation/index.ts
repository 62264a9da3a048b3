/**
 * The in-memory revocation index every evaluation reads (`RevocationView` of the core): the
 * sets of revoked delegation ids and agreement ids, each within its organization (an id names
 * a record within one organization, docs/scale.md "Organization-scoped ids"; '' for records
 * without one). An evaluation reads it through `scoped(agreementOrg, delegationOrg)`.
 *
 * Promises:
 * - Fed by a revocation source (the LISTEN channel on `writ_revocations`) and by direct marks
 *   (`markDelegationRevoked`/`markAgreementRevoked`: the Kubernetes watch, or the process that
 *   just revoked). Revocation is final: there is no unmark, and the sets only grow.
 * - Loaded from the tables (`delegation_revocations`; agreements revoked or named by a pushed
 *   revocation) after EVERY (re)connection of the source, after LISTEN is active, so nothing
 *   announced while disconnected is missed. A failed load is retried until it succeeds.
 * - `stale()` is true (verify must fail closed) before the first load completes, and while the
 *   source has been down, or its catch-up load has not completed, for longer than
 *   `staleAfterMs`.
 */
import { EventEmitter } from "node:events";
import type { RevocationView } from "../../core/evaluate/index.js";
import { listRevokedAgreementIds, listRevokedDelegationIds, type Queryable, type RevocationAnnouncement, type RevocationSource } from "../../store/index.js";

/** Default bound after which a disconnected index reports stale. */
export const DEFAULT_STALE_AFTER_MS = 5000;

/** Options of a RevocationIndex. */
export interface RevocationIndexOptions {
  /** Where loads read the tables (a pool). */
  db: Queryable;
  /** The announcements (a RevocationChannel). */
  source: RevocationSource;
  /** Bound of a disconnection before `stale()` (default DEFAULT_STALE_AFTER_MS). */
  staleAfterMs?: number;
  /** Delay before retrying a failed load (default 500 ms). */
  reloadRetryMs?: number;
  /** Clock, epoch ms (default Date.now). */
  clock?: () => number;
}

/** Events of a RevocationIndex. */
export interface RevocationIndexEvents {
  /** A load from the tables completed. */
  loaded: [{ delegations: number; agreements: number }];
  /** Ids were revoked (announced or marked) that the index did not hold yet. */
  revoked: [RevocationAnnouncement];
  /** A load failed (it is retried). */
  failure: [Error];
}

/** The index (see the module comment). */
/** The key of `id` of organization `org` ('' or null: none) in the index's sets. */
function key(org: string | null | undefined, id: string): string {
  return `${org ?? ""}\u0000${id}`;
}

export class RevocationIndex extends EventEmitter<RevocationIndexEvents> {
  private readonly delegations = new Set<string>();
  private readonly agreements = new Set<string>();
  protected readonly clock: () => number;
  private readonly staleAfterMs: number;
  private loadedOnce = false;
  /** Since when announcements may have been missed (undefined while caught up). */
  private downSince: number | undefined;
  /** Counts connections, so a load started for an older one does not clear `downSince`. */
  private epoch = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private resolveFirstLoad: () => void = () => {};
  private readonly firstLoad = new Promise<void>((resolve) => (this.resolveFirstLoad = resolve));

  constructor(private readonly opts: RevocationIndexOptions) {
    super();
    this.clock = opts.clock ?? Date.now;
    this.staleAfterMs = opts.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
    this.downSince = this.clock();
    opts.source.on("revoked", (a) => this.apply(a));
    opts.source.on("connected", () => {
      this.epoch++;
      void this.load(this.epoch);
    });
    opts.source.on("disconnected", () => {
      this.epoch++;
      this.downSince ??= this.clock();
    });
  }

  /** Starts the source; resolves once the first load has completed (or on stop). */
  async start(): Promise<void> {
    await this.opts.source.start();
    await this.firstLoad;
  }

  /** Stops the source and any pending retry. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.resolveFirstLoad();
    await this.opts.source.stop();
  }

  /** The delegation `id` of organization `org` is revoked. */
  isDelegationRevoked(org: string | null, id: string): boolean {
    return this.delegations.has(key(org, id));
  }

  /** The agreement `id` of organization `org` is revoked. */
  isAgreementRevoked(org: string | null, id: string): boolean {
    return this.agreements.has(key(org, id));
  }

  /** The view of one evaluation: its agreement's organization, and its delegation's (whose chain links are of its organization). */
  scoped(agreementOrg: string | null, delegationOrg: string | null = agreementOrg): RevocationView {
    return {
      isDelegationRevoked: (id) => this.delegations.has(key(delegationOrg, id)),
      isAgreementRevoked: (id) => this.agreements.has(key(agreementOrg, id)),
    };
  }

  /** Marks delegation `id` of organization `org` revoked (final). */
  markDelegationRevoked(org: string | null, id: string): void {
    this.apply({ kind: "delegation", org: org ?? "", ids: [id] });
  }

  /** Marks agreement `id` of organization `org` revoked (final). */
  markAgreementRevoked(org: string | null, id: string): void {
    this.apply({ kind: "agreement", org: org ?? "", ids: [id] });
  }

  /** True when revocation state may be stale (see the module comment): verify fails closed. */
  stale(): boolean {
    if (!this.loadedOnce) return true;
    return this.downSince !== undefined && this.clock() - this.downSince > this.staleAfterMs;
  }

  /** Sizes of the two sets. */
  get size(): { delegations: number; agreements: number } {
    return { delegations: this.delegations.size, agreements: this.agreements.size };
  }

  /** Loads the revoked ids from the tables now (also done after every connection). */
  async reload(): Promise<void> {
    const [d, a] = await Promise.all([listRevokedDelegationIds(this.opts.db), listRevokedAgreementIds(this.opts.db)]);
    for (const r of d) this.delegations.add(key(r.org, r.id));
    for (const r of a) this.agreements.add(key(r.org, r.id));
  }

  private async load(epoch: number): Promise<void> {
    if (this.stopped) return;
    try {
      await this.reload();
    } catch (e) {
      this.emit("failure", e instanceof Error ? e : new Error(String(e)));
      if (!this.stopped && epoch === this.epoch) {
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          void this.load(epoch);
        }, this.opts.reloadRetryMs ?? 500);
      }
      return;
    }
    if (this.stopped) return;
    // Caught up only if the connection this load followed is still the current one.
    if (epoch === this.epoch) this.downSince = undefined;
    this.loadedOnce = true;
    this.resolveFirstLoad();
    this.emit("loaded", { delegations: this.delegations.size, agreements: this.agreements.size });
  }

  private apply(a: RevocationAnnouncement): void {
    const set = a.kind === "delegation" ? this.delegations : this.agreements;
    const fresh = a.ids.filter((id) => !set.has(key(a.org, id)));
    for (const id of fresh) set.add(key(a.org, id));
    if (fresh.length > 0) this.emit("revoked", { kind: a.kind, org: a.org, ids: fresh });
  }
}
