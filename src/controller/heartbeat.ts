/**
 * The controller's heartbeat (src/store/controller-heartbeat.ts): every `intervalMs` the replica
 * that leads (or led last, until another takes the row over) writes how far it has observed the
 * cluster: the instant up to which every change the API server announced has been processed
 * into Postgres (`observedUpTo`), and whether its probe reaches the API server. The data plane
 * trusts that, through Postgres, for revocation state while its own watch is down
 * (docs/operator.md, "Payments through an API server outage").
 *
 * `observedUpTo` is the earliest of: now; when an informer stopped watching (or, silent, last
 * heard); when the probe stopped reaching the API server; when the oldest key still queued (not
 * delayed) or being processed was queued. Nothing is written before every informer has listed.
 */
import type { Pool } from "pg";
import type { ApiServerProbe, Informer } from "../sources/kubernetes/index.js";
import { writeHeartbeat } from "../store/index.js";
import type { Clock } from "../core/time/index.js";
import { errorText, type Logger } from "./log.js";
import type { WorkQueue } from "./queue/work-queue.js";

/** The instant up to which everything observed is processed (see the module comment); undefined before every informer listed. */
export function observedUpTo(now: number, informers: readonly Informer[], queues: readonly WorkQueue[], probe?: ApiServerProbe): number | undefined {
  let t = now;
  for (const i of informers) {
    if (!i.hasSynced()) return undefined;
    if (!i.healthy()) t = Math.min(t, i.disconnectedSince() ?? i.lastEventAt() ?? now);
  }
  const down = probe?.unreachableSince();
  if (down !== undefined) t = Math.min(t, down);
  for (const q of queues) {
    const pending = q.oldestPendingSince();
    if (pending !== undefined) t = Math.min(t, pending);
  }
  return t;
}

/** Options of the heartbeat. */
export interface HeartbeatOptions {
  pool: Pool;
  /** The Lease name (the row), `none` without leader election. */
  lease: string;
  identity: string;
  intervalMs: number;
  clock: Clock;
  log: Logger;
  informers: readonly Informer[];
  /** The queues whose pending keys hold the heartbeat back (delegations, agreements). */
  queues: readonly WorkQueue[];
  probe: ApiServerProbe;
  /** True while this replica leads. */
  leading(): boolean;
}

/** The running heartbeat. */
export class ControllerHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  /** This replica led and has not seen its row taken over since. */
  private holder = false;
  private writing = false;
  private lastError = "";

  constructor(private readonly opts: HeartbeatOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.beat(), this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One heartbeat (exported for tests); resolves with whether a row was written. */
  async beat(): Promise<boolean> {
    const o = this.opts;
    const leading = o.leading();
    if (leading) this.holder = true;
    if (!this.holder || this.writing) return false;
    const now = o.clock.now();
    const observed = observedUpTo(now, o.informers, o.queues, o.probe);
    if (observed === undefined) return false;
    this.writing = true;
    try {
      const written = await writeHeartbeat(o.pool, {
        lease: o.lease,
        identity: o.identity,
        observedLagMs: now - observed,
        apiReachable: o.probe.reachable(),
        takeOver: leading,
      });
      // A former leader stops once another replica holds the row.
      if (!written && !leading) this.holder = false;
      this.lastError = "";
      return written;
    } catch (err) {
      const text = errorText(err);
      if (text !== this.lastError) o.log.warn("cannot write the controller heartbeat", { error: text });
      this.lastError = text;
      return false;
    } finally {
      this.writing = false;
    }
  }
}
