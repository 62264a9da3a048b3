/**
 * What the Kubernetes revocation watch (./kube-watch.ts) does with each object it sees: works
 * out what it revokes (./kube-revocations.ts), checks the tenancy, marks the index, and records
 * the lag.
 *
 * Promises:
 * - Tenancy first: a record is marked only when the namespace's `writ.dev/org-id` label names
 *   the organization the record is stored for in Postgres (the controller's binding rule, with
 *   its 10 s namespace cache), so a tenant cannot revoke another tenant's record through the
 *   watch; and only when the resource is the record's stored owner (src/store/record-owners.ts:
 *   the resource that created it, by uid), so a resource whose `writ.dev/record-id` annotation
 *   was repointed cannot revoke another namespace's record. A record not stored (yet), or that
 *   no resource owns, is left to the controller. Such refusals are logged once.
 * - A check that fails (API server, Postgres) is retried 5 times with doubling delays (from
 *   200 ms), then at the next resync; `get namespaces` forbidden (RBAC) is not retried: those
 *   revocations wait for the controller. `inflight()` counts checks under way and retries pending.
 * - `writ_revocation_lag_seconds{source="kubernetes",kind}` observes, for changes seen live
 *   (`live`), the time from the change (as the object tells) to the mark.
 */
import { registered } from "../../metrics/index.js";
import { Histogram, type Registry } from "prom-client";
import { systemClock } from "../../core/time/index.js";
import { NamespaceBindings, type KubeTransport, isKubeError, type KubeObject } from "../../sources/kubernetes/index.js";
import { agreementRow, loadDelegation, getOrg, ownerOf, type Queryable } from "../../store/index.js";
import { ownerIdentity } from "../../core/crd/index.js";
import { revocationOf, type WatchedKind, type WatchedRevocation } from "./kube-revocations.js";
import type { RevocationIndex } from "./index.js";

/** What the watch needs of the index. */
export type RevocationMarks = Pick<RevocationIndex, "markDelegationRevoked" | "markAgreementRevoked" | "isDelegationRevoked" | "isAgreementRevoked">;

/** A pino-style logger (fields first). */
export interface KubeWatchLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}

const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const CHECK_ATTEMPTS = 5;

/** The histogram `writ_revocation_lag_seconds` on `registry` (created once). */
function lagHistogram(registry: Registry): Histogram<"source" | "kind"> {
  return registered(
    registry,
    "writ_revocation_lag_seconds",
    (registers) =>
      new Histogram({
        name: "writ_revocation_lag_seconds",
        help: "Time from a revocation (the resource's change) to its mark in this process's revocation index, seconds.",
        labelNames: ["source", "kind"] as const,
        buckets: LAG_BUCKETS,
        registers,
      }),
  );
}

/** Checks and marks (see the module comment). */
export class RevocationMarker {
  private readonly bindings: NamespaceBindings;
  private readonly lag: Histogram<"source" | "kind"> | undefined;
  private readonly warned = new Set<string>();
  private pending = 0;
  private stopped = false;

  constructor(private readonly opts: { client: KubeTransport; index: RevocationMarks; db: Queryable; log: KubeWatchLog; registry?: Registry }) {
    this.bindings = new NamespaceBindings(opts.client, (id) => getOrg(opts.db, id), systemClock);
    this.lag = opts.registry ? lagHistogram(opts.registry) : undefined;
  }

  /** Checks under way and retries pending. */
  inflight(): number {
    return this.pending;
  }

  /** No more marks or retries. */
  stop(): void {
    this.stopped = true;
  }

  /** Starts checking what `obj` (of `kind`) revokes; `live`: a change seen on the watch, not a list. */
  check(kind: WatchedKind, obj: KubeObject, live: boolean, attempt = 1): void {
    this.pending += 1;
    void this.consider(kind, obj, live, attempt).finally(() => (this.pending -= 1));
  }

  /** Warns once per `key` (resyncs would repeat the same warning every minute). */
  private warnOnce(key: string, fields: object, msg: string): void {
    if (this.warned.has(key)) return;
    if (this.warned.size >= 10_000) this.warned.clear();
    this.warned.add(key);
    this.opts.log.warn(fields, msg);
  }

  /** `r.id` of organization `org` is marked revoked already. */
  private marked(org: string, r: WatchedRevocation): boolean {
    return r.kind === "delegation" ? this.opts.index.isDelegationRevoked(org, r.id) : this.opts.index.isAgreementRevoked(org, r.id);
  }

  /**
   * The organization `namespace` is labelled with when `r.id` is stored for it (an id names a
   * record within its organization) and owned by the resource `uid` (its owner identity);
   * undefined otherwise. Null when it is marked already (nothing to do).
   */
  private async sameTenant(r: WatchedRevocation, namespace: string, uid: string): Promise<string | null | undefined> {
    const org = await this.bindings.labelledOrg(namespace);
    if (org === undefined) return undefined;
    if (this.marked(org, r)) return null;
    const stored = r.kind === "delegation" ? await loadDelegation(this.opts.db, r.id, undefined, org) : await agreementRow(this.opts.db, r.id, org);
    return stored !== undefined && (await ownerOf(this.opts.db, r.kind, r.id, org))?.uid === uid ? org : undefined;
  }

  private async consider(kind: WatchedKind, obj: KubeObject, live: boolean, attempt: number): Promise<void> {
    const r = revocationOf(kind, obj);
    if (!r || this.stopped) return;
    const namespace = obj.metadata.namespace ?? "";
    const where = { kind, id: r.id, trigger: r.trigger, resource: `${namespace}/${obj.metadata.name}` };
    let org: string | null | undefined;
    try {
      org = await this.sameTenant(r, namespace, ownerIdentity(kind === "delegation" ? "Delegation" : "IntentAgreement", namespace, obj.metadata.name));
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      if (isKubeError(err, "FORBIDDEN")) {
        this.warnOnce(
          `forbidden|${namespace}`,
          { ...where, error },
          "cannot read the namespace (RBAC: get namespaces): revocations there wait for the controller",
        );
      } else if (attempt < CHECK_ATTEMPTS && !this.stopped) {
        this.pending += 1;
        setTimeout(
          () => {
            this.pending -= 1;
            this.check(kind, obj, live, attempt + 1);
          },
          100 * 2 ** attempt,
        ).unref();
      } else {
        this.opts.log.warn({ ...where, error }, "cannot check a revocation's tenancy; retried at the next resync");
      }
      return;
    }
    if (org === null) return;
    if (org === undefined) {
      this.warnOnce(
        `${where.resource}|${r.id}`,
        where,
        "a revocation on the watch names a record not stored for its namespace's organization, or not owned by this resource: left to the controller",
      );
      return;
    }
    if (this.marked(org, r) || this.stopped) return;
    if (kind === "delegation") this.opts.index.markDelegationRevoked(org, r.id);
    else this.opts.index.markAgreementRevoked(org, r.id);
    const lagMs = r.changedAtMs === undefined ? undefined : Math.max(0, Date.now() - r.changedAtMs);
    if (live && lagMs !== undefined) this.lag?.observe({ source: "kubernetes", kind }, lagMs / 1000);
    this.opts.log.info(
      { ...where, lag_ms: live ? lagMs : undefined, lag_precise: r.precise },
      "revocation seen on the Kubernetes watch: marked in the revocation index",
    );
  }
}
