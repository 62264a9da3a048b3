/**
 * The second way revocations reach the data plane: the controller observes the cluster and
 * writes what it revokes to Postgres, announced with NOTIFY (the index's LISTEN channel). This
 * module reads the controller's heartbeat (src/store/controller-heartbeat.ts) and says whether
 * that path is fresh enough to decide on while this process's own Kubernetes watch is down.
 *
 * `vouch(now)` answers, from the last reading (its ages advanced by the time since it was read):
 * - `controller`: the heartbeat was written within `staleMs` and the controller reaches the API
 *   server and has processed everything it observed up to at most `staleMs` ago: revocations
 *   declared in the cluster reach Postgres, so this process's own watch is not needed (a data
 *   plane cut off from the API server only).
 * - `outage`: the heartbeat was written within `staleMs`, the controller does NOT reach the API
 *   server, nor does this process (its probe fails), and what the controller observed is at
 *   most `outageMs` old: the API server is down for both, so nothing can be declared in the
 *   cluster that the last observation lacks. Bounded by `outageMs` (0: never) because an API
 *   server partitioned from both while still reachable by its clients would look the same.
 * - nothing otherwise (no reading, a heartbeat older than `staleMs`: the controller or Postgres
 *   is cut off), and verify fails closed unless the watch itself is fresh.
 *
 * Readings are polled every `pollMs`; a failed poll keeps the previous reading, whose ages keep
 * growing, so a data plane cut off from Postgres stops trusting it within `staleMs`.
 */
import { readHeartbeat, type HeartbeatReading, type Queryable } from "../../store/index.js";

/** Why the controller's path is fresh. */
export type ControllerVouch = { path: "controller" | "outage"; detail: string };

/** Options of a ControllerPath. */
export interface ControllerPathOptions {
  db: Queryable;
  /** The Lease whose heartbeat to read (WRIT_CONTROLLER_LEASE); undefined: the most recent one. */
  lease: string | undefined;
  staleMs: number;
  /** WRIT_API_OUTAGE_GRACE_MS: how old an observation may be while the API server is down for both (0: never trusted). */
  outageMs: number;
  /** True while this process's own probe finds the API server unreachable. */
  apiUnreachable(): boolean;
  pollMs?: number;
  /** Called after each poll (the index re-evaluates its freshness). */
  onReading?(): void;
  clock?: () => number;
}

/** The controller's path (see the module comment). */
export class ControllerPath {
  private reading: HeartbeatReading | undefined;
  private readAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private readonly clock: () => number;

  constructor(private readonly opts: ControllerPathOptions) {
    this.clock = opts.clock ?? Date.now;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), this.opts.pollMs ?? Math.max(100, Math.min(1000, Math.floor(this.opts.staleMs / 4))));
    this.timer.unref();
    void this.poll();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads the heartbeat now (a failure keeps the previous reading). */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const r = await readHeartbeat(this.opts.db, this.opts.lease);
      this.reading = r;
      this.readAt = this.clock();
    } catch {
      // Keep the last reading: its ages grow, so it stops vouching within staleMs.
    } finally {
      this.polling = false;
    }
    this.opts.onReading?.();
  }

  /** ms since the controller last wrote its heartbeat, as far as this process knows; undefined without one. */
  heartbeatAgeMs(now = this.clock()): number | undefined {
    return this.reading ? this.reading.writtenAgeMs + (now - this.readAt) : undefined;
  }

  /** Whether the controller's path vouches for revocation state now (see the module comment). */
  vouch(now = this.clock()): ControllerVouch | undefined {
    const r = this.reading;
    if (!r) return undefined;
    const since = now - this.readAt;
    const written = r.writtenAgeMs + since;
    const observed = r.observedAgeMs + since;
    if (written > this.opts.staleMs) return undefined;
    if (r.apiReachable) {
      return observed <= this.opts.staleMs
        ? {
            path: "controller",
            detail: `the Kubernetes watch is down; the controller (${r.identity}) observes the cluster and has processed it up to ${Math.round(observed)} ms ago`,
          }
        : undefined;
    }
    if (this.opts.outageMs > 0 && this.opts.apiUnreachable() && observed <= this.opts.outageMs) {
      return {
        path: "outage",
        detail: `the API server is unreachable from this process and from the controller (${r.identity}); its last complete observation is ${Math.round(observed)} ms old (bound WRIT_API_OUTAGE_GRACE_MS=${this.opts.outageMs})`,
      };
    }
    return undefined;
  }
}
