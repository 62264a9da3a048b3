/**
 * Leader election on a `coordination.k8s.io/v1` Lease, client-go's algorithm with
 * controller-runtime's timings (lease 15 s, renew deadline 10 s, retry 2 s).
 *
 * - Every retry period (jittered up to 1.2x while acquiring) a replica reads the Lease. If
 *   another identity holds it and the record has changed within the lease duration, as seen
 *   on THIS replica's clock (the time it last observed a change, never the holder's
 *   `renewTime`, so clock skew between nodes does not matter), it waits. Otherwise it writes
 *   itself as holder with a PUT carrying the read resourceVersion: of two replicas racing for an
 *   expired lease exactly one wins, the other gets 409 Conflict.
 * - The leader renews every retry period; when no renewal succeeded for the renew deadline it
 *   has lost the lease and calls `onStoppedLeading` (the manager then stops processing and exits,
 *   as controller-runtime does). The renew deadline is shorter than the lease duration, so it
 *   stops before another replica may take over.
 * - `stop({release: true})` gives the lease up (empty holder, 1 s duration) so a standby takes
 *   over at once; a replica that is killed does not release, and a standby takes over after the
 *   lease duration.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { type KubeTransport, isKubeError, resourcePath, type KubeObject } from "../sources/kubernetes/index.js";
import { systemClock, type Clock, type ClockTimer } from "../core/time/index.js";
import { errorText, silentLogger, type Logger } from "./log.js";

/** A Lease (the members used). */
export interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number | null;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number | null;
  };
}

/** Options of a LeaderElector. */
export interface LeaderElectionOptions {
  client: KubeTransport;
  namespace: string;
  /** Name of the Lease. */
  name: string;
  /** This replica's identity (unique: POD_NAME plus a random suffix). */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  clock?: Clock;
  log?: Logger;
  random?: () => number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  /** Called when the observed holder changes (including to this replica). */
  onNewLeader?(identity: string): void;
}

const LEASES = { group: "coordination.k8s.io", version: "v1", plural: "leases" };

/** `POD_NAME` (or the host name) plus a random suffix, like controller-runtime's identity. */
export function leaderIdentity(podName?: string): string {
  return `${podName?.trim() || hostname()}_${randomBytes(6).toString("hex")}`;
}

/** A Kubernetes MicroTime (RFC 3339 with microseconds). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** The leader elector (see the module comment). */
export class LeaderElector {
  private leading = false;
  private stopped = false;
  private observed = "";
  private observedAt = 0;
  private observedHolder: string | undefined;
  private lease: Lease | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  private readonly random: () => number;
  private readonly path: string;
  private readonly collection: string;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? silentLogger;
    this.leaseMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryMs = opts.retryPeriodMs ?? 2_000;
    this.random = opts.random ?? Math.random;
    if (!(this.leaseMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryMs)) {
      throw new RangeError("leader election needs lease duration > renew deadline > retry period");
    }
    const ref = { ...LEASES, namespace: opts.namespace };
    this.collection = resourcePath(ref);
    this.path = resourcePath(ref, opts.name);
  }

  /** Starts campaigning in the background. */
  start(): void {
    this.loop ??= this.run();
  }

  /** True while this replica holds the lease. */
  isLeader(): boolean {
    return this.leading;
  }

  /** The holder last observed. */
  currentLeader(): string | undefined {
    return this.observedHolder;
  }

  /** Stops campaigning; with `release`, a held lease is given up first. */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    if (this.leading) {
      this.leading = false;
      if (opts.release) await this.release();
      this.opts.onStoppedLeading();
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: ClockTimer | undefined = undefined;
      const done = () => {
        timer?.cancel();
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      timer = this.clock.setTimer(done, ms);
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      while (!this.stopped && !(await this.tryAcquireOrRenew())) await this.sleep(this.retryMs * (1 + 0.2 * this.random()));
      if (this.stopped) return;
      this.leading = true;
      this.log.info("became leader", { lease: `${this.opts.namespace}/${this.opts.name}`, identity: this.opts.identity });
      this.opts.onStartedLeading();
      let renewed = this.clock.now();
      while (!this.stopped) {
        await this.sleep(this.retryMs);
        if (this.stopped) return;
        if (await this.tryAcquireOrRenew()) {
          renewed = this.clock.now();
          continue;
        }
        if (this.clock.now() - renewed >= this.renewDeadlineMs) {
          this.leading = false;
          this.log.error("leader election lost", { lease: `${this.opts.namespace}/${this.opts.name}`, identity: this.opts.identity });
          this.opts.onStoppedLeading();
          break;
        }
      }
    }
  }

  private observe(lease: Lease): void {
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity ?? "", spec.leaseDurationSeconds, spec.acquireTime, spec.renewTime, spec.leaseTransitions]);
    if (record !== this.observed) {
      this.observed = record;
      this.observedAt = this.clock.now();
    }
    const holder = spec.holderIdentity ?? "";
    if (holder !== "" && holder !== this.observedHolder) {
      this.observedHolder = holder;
      this.opts.onNewLeader?.(holder);
    }
    this.lease = lease;
  }

  /** One attempt: true when this replica holds the lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.clock.now();
    const me = this.opts.identity;
    const timeoutMs = Math.min(5000, this.renewDeadlineMs);
    const durationSeconds = Math.ceil(this.leaseMs / 1000);
    let current: Lease;
    try {
      current = await this.opts.client.request<Lease>("GET", this.path, { timeoutMs });
    } catch (err) {
      if (!isKubeError(err, "NOT_FOUND")) {
        this.log.warn("cannot read the lease", { error: errorText(err) });
        return false;
      }
      const fresh: Lease = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: this.opts.name, namespace: this.opts.namespace },
        spec: { holderIdentity: me, leaseDurationSeconds: durationSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
      };
      try {
        this.observe(await this.opts.client.request<Lease>("POST", this.collection, { body: fresh, timeoutMs }));
        return true;
      } catch (e) {
        if (!isKubeError(e, "ALREADY_EXISTS") && !isKubeError(e, "CONFLICT")) this.log.warn("cannot create the lease", { error: errorText(e) });
        return false;
      }
    }
    this.observe(current);
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    if (holder !== "" && holder !== me && this.observedAt + this.leaseMs > now) return false;
    const mine = holder === me;
    const next: Lease = {
      ...current,
      spec: {
        ...spec,
        holderIdentity: me,
        leaseDurationSeconds: durationSeconds,
        renewTime: microTime(now),
        acquireTime: mine && spec.acquireTime ? spec.acquireTime : microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    };
    try {
      this.observe(await this.opts.client.request<Lease>("PUT", this.path, { body: next, timeoutMs }));
      return true;
    } catch (err) {
      if (!isKubeError(err, "CONFLICT")) this.log.warn("cannot update the lease", { error: errorText(err) });
      return false;
    }
  }

  private async release(): Promise<void> {
    const lease = this.lease;
    if (!lease || lease.spec?.holderIdentity !== this.opts.identity) return;
    const now = microTime(this.clock.now());
    const body: Lease = { ...lease, spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1, renewTime: now, acquireTime: now } };
    try {
      await this.opts.client.request<Lease>("PUT", this.path, { body, timeoutMs: 5000 });
    } catch (err) {
      this.log.warn("cannot release the lease", { error: errorText(err) });
    }
  }
}
