/**
 * The delivery worker: sends due outbox rows to subscribers, signed with the log key.
 *
 * Promise:
 * - At-least-once: a row is retried until a 2xx answer or `maxAttempts` attempts (then it is
 *   marked failed and never retried). A receiver may see an event more than once (after a lost
 *   answer, a crash or a lease expiry) and deduplicates by `event_id`.
 * - It never slows the API: it runs beside request handling, holds no database connection while
 *   a request is out (rows are leased, then the connection is returned), keeps at most
 *   `concurrency` requests in flight, and every request ends within `timeoutMs`.
 * - Fair per subscribing organization, then per host, then per destination: at most
 *   `perOrganization` requests are in flight for one organization's subscriptions (whatever
 *   hosts and ports they name), at most `perHost` of them to one host (all its ports together)
 *   and at most `perDestination` to one `host[:port]`. A claim takes at most one row per
 *   (organization, host) and none of an organization, host or destination at its limit; every
 *   delivery runs on its own (nothing waits for a batch). An organization whose receivers are
 *   slow or silent, on however many ports or hosts, therefore holds at most `perOrganization`
 *   of the `concurrency` slots, each for at most `timeoutMs` (`connectTimeoutMs` when it does
 *   not even accept), and never delays another organization while fewer than
 *   `concurrency / perOrganization` organizations are stuck. A row whose subscription is not in
 *   the registry counts as an organization of its own.
 * - Deliveries go only where the outbound policy allows (`policy`; src/http/outbound.ts); a
 *   refused destination is a failed attempt (retried, then failed for good) naming the reason.
 * - Several workers (in one process or many) share the table safely (`FOR UPDATE SKIP LOCKED`).
 * - Each round first expands pending alert fan-outs (src/store/alert-fanout.ts) that their
 *   writer did not expand after commit, so such an alert is delivered all the same.
 * - New rows go out promptly (LISTEN `writ_webhooks`), due retries when their time comes (a local
 *   timer), and anything else within `pollIntervalMs` (the poll is the durable path).
 * - `stop()` aborts requests in flight, gives their rows back (due now, the interrupted attempt
 *   not counted), stops listening and resolves when nothing of the worker runs any more.
 */
import type { Pool, ClientConfig } from "pg";
import type { Registry } from "prom-client";
import type { Signer } from "../core/jose/index.js";
import { STRICT_OUTBOUND, type OutboundPolicy, type OutboundDeps } from "../http/index.js";
import { signAlert } from "../core/alerts/index.js";
import { DEFAULT_RETRY_POLICY, nextRetryDelay, type RetryPolicy } from "./backoff.js";
import { deliverOnce } from "./deliver.js";
import { deliveriesCounter } from "./metrics.js";
import { claimDue, finishDelivered, finishFailed, releaseClaim, type ClaimedDelivery, expandFanouts, listenForWakeups } from "../store/index.js";
import { StopGroup } from "../core/lifecycle/index.js";

/** Where the worker reports (a pino/Fastify logger fits). */
export interface WorkerLog {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** Options of `startDeliveryWorker` (every member optional). */
export interface DeliveryWorkerOptions {
  /** Per-request time limit (default 5000 ms). */
  timeoutMs?: number;
  /** Time limit of connecting (default 2000 ms, at most `timeoutMs`). */
  connectTimeoutMs?: number;
  /** Largest number of requests in flight to one destination `host[:port]` of one organization (default 2). */
  perDestination?: number;
  /** Largest number of requests in flight to one host (every port) of one organization (default 4). */
  perHost?: number;
  /** Largest number of requests in flight for one subscribing organization (default 8). */
  perOrganization?: number;
  /** Where deliveries may go (default: public addresses only). */
  policy?: OutboundPolicy;
  /** The resolver and socket opener of deliveries (tests). */
  net?: OutboundDeps;
  /** Retry schedule (default 1 s doubling to 10 min, 12 attempts). */
  retry?: Partial<RetryPolicy>;
  /** Largest number of requests in flight (default 64). */
  concurrency?: number;
  /** Largest number of rows claimed per query (default 10). */
  batchSize?: number;
  /** Poll interval (default 1000 ms). */
  pollIntervalMs?: number;
  /** Connection to LISTEN on (default: the pool's settings); false: poll only. */
  listen?: ClientConfig | false;
  /** Registry for `writ_webhook_deliveries_total` (default: a private counter). */
  registry?: Registry;
  log?: WorkerLog;
  /** The worker does nothing while this returns false (e.g. before migrations ran). */
  isReady?: () => boolean;
  /** Source of jitter, [0, 1) (default Math.random). */
  random?: () => number;
}

/** A running worker. */
export interface DeliveryWorker {
  /** Stops the worker (idempotent); see the module comment. */
  stop(): Promise<void>;
}

const SILENT: WorkerLog = { warn: () => {}, debug: () => {} };
/** Slack added to local retry timers so the row is due in the database's clock too. */
const TIMER_SLACK_MS = 15;

function positive(v: number | undefined, fallback: number): number {
  return v !== undefined && Number.isFinite(v) && v > 0 ? v : fallback;
}

/** Starts a delivery worker on `pool`, signing with `signer` (the log key). */
export function startDeliveryWorker(pool: Pool, signer: Signer, opts: DeliveryWorkerOptions = {}): DeliveryWorker {
  const timeoutMs = positive(opts.timeoutMs, 5000);
  const retry: RetryPolicy = {
    minMs: positive(opts.retry?.minMs, DEFAULT_RETRY_POLICY.minMs),
    maxMs: positive(opts.retry?.maxMs, DEFAULT_RETRY_POLICY.maxMs),
    maxAttempts: positive(opts.retry?.maxAttempts, DEFAULT_RETRY_POLICY.maxAttempts),
  };
  const connectTimeoutMs = Math.min(positive(opts.connectTimeoutMs, 2000), timeoutMs);
  const concurrency = Math.floor(positive(opts.concurrency, 64));
  const perDestination = Math.floor(positive(opts.perDestination, 2));
  const perHost = Math.max(perDestination, Math.floor(positive(opts.perHost, 4)));
  const perOrganization = Math.max(perHost, Math.floor(positive(opts.perOrganization, 8)));
  const outbound = opts.policy ?? STRICT_OUTBOUND;
  /** Requests in flight per destination, per host and per tenant (`ClaimedDelivery` keys). */
  const busy = { destination: new Map<string, number>(), host: new Map<string, number>(), tenant: new Map<string, number>() };
  const keysOf = (d: ClaimedDelivery) =>
    [
      [busy.destination, d.destination],
      [busy.host, d.host],
      [busy.tenant, d.tenant],
    ] as const;
  const full = (m: Map<string, number>, limit: number) => [...m].filter(([, n]) => n >= limit).map(([k]) => k);
  const batchSize = Math.floor(positive(opts.batchSize, 10));
  // A claimed row is not due again before the attempt must have ended.
  const leaseMs = 2 * timeoutMs + 10_000;
  const log = opts.log ?? SILENT;
  const counter = deliveriesCounter(opts.registry);
  const parts = new StopGroup();
  const shutdown = new AbortController();
  const inFlight = new Set<Promise<void>>();
  const retryTimer = new EarliestTimer(() => rounds.request());
  /** Set by a wake-up or a poll: pending fan-outs are looked for in the next round. */
  const fanouts = { due: true };

  const finish = async (d: ClaimedDelivery, body: string) => {
    const r = await deliverOnce({
      url: d.webhookUrl,
      body,
      eventId: d.eventId,
      attempt: d.attempt,
      timeoutMs,
      connectTimeoutMs,
      policy: outbound,
      signal: shutdown.signal,
      ...(opts.net ? { net: opts.net } : {}),
    });
    if (r.ok) {
      await finishDelivered(pool, d);
      counter.inc({ result: "delivered" });
      log.debug({ event_id: d.eventId, attempt: d.attempt, status: r.status }, "webhook delivered");
      return;
    }
    if (r.aborted) {
      await releaseClaim(pool, d);
      return;
    }
    const retryIn = nextRetryDelay(d.attempt, retry, opts.random);
    await finishFailed(pool, d, r.error, retryIn);
    counter.inc({ result: retryIn === null ? "failed" : "retry" });
    if (retryIn === null) log.warn({ event_id: d.eventId, attempts: d.attempt, error: r.error }, "webhook delivery failed for good");
    else {
      log.debug({ event_id: d.eventId, attempt: d.attempt, error: r.error, retry_in_ms: retryIn }, "webhook delivery failed");
      if (!parts.stopped) retryTimer.in(retryIn + TIMER_SLACK_MS);
    }
  };

  const start = (d: ClaimedDelivery) => {
    for (const [m, k] of keysOf(d)) m.set(k, (m.get(k) ?? 0) + 1);
    const p = (async () => {
      if (parts.stopped) return releaseClaim(pool, d).then(() => {});
      const body = JSON.stringify(await signAlert(d.payload, signer));
      await finish(d, body);
    })()
      .catch((err: unknown) => log.warn({ err, event_id: d.eventId }, "webhook delivery bookkeeping failed; the lease will expire"))
      .finally(() => {
        inFlight.delete(p);
        for (const [m, k] of keysOf(d)) {
          const left = (m.get(k) ?? 1) - 1;
          if (left > 0) m.set(k, left);
          else m.delete(k);
        }
        rounds.request();
      });
    inFlight.add(p);
  };

  /** One round: expand pending fan-outs, then claim and start due rows while any come and slots are free. */
  const claimRound = async () => {
    if (opts.isReady && !opts.isReady()) return;
    // Fan-outs whose writer did not expand them (it died after commit) become outbox rows here,
    // on a wake-up or a poll (not after every finished delivery).
    if (fanouts.due) {
      fanouts.due = false;
      for (let full = true; full && !parts.stopped;) full = (await expandFanouts(pool, { limit: 100 })).fanouts === 100;
    }
    let more: boolean;
    do {
      rounds.takeRequest();
      if (opts.isReady && !opts.isReady()) return;
      const want = Math.min(concurrency - inFlight.size, batchSize);
      if (want <= 0) return;
      const claimed = await claimDue(pool, want, leaseMs, {
        skipDestinations: full(busy.destination, perDestination),
        skipHosts: full(busy.host, perHost),
        skipTenants: full(busy.tenant, perOrganization),
      });
      for (const d of claimed) start(d);
      // Rows came (more may be due), or a wake-up came during this claim.
      more = claimed.length > 0 || rounds.takeRequest();
    } while (more && !parts.stopped);
  };
  const rounds: Rounds = new Rounds(claimRound, {
    stopped: () => parts.stopped,
    // Warn once per outage; the poll retries every interval.
    failed: (err, again) =>
      again ? log.debug({ err }, "webhook outbox poll failed again") : log.warn({ err }, "webhook outbox poll failed; retrying every poll interval"),
  });
  const wake = () => {
    fanouts.due = true;
    rounds.request();
  };

  // Registered in start order; `stop()` runs them in reverse: no new rounds, then the
  // deliveries in flight are aborted and drained (their rows given back), then the wake-ups end.
  const listen = opts.listen === false ? null : (opts.listen ?? (pool as Pool & { options?: ClientConfig }).options ?? null);
  if (listen) {
    const wakeup = listenForWakeups({ connection: listen, onWake: wake, onError: (err) => log.debug({ err }, "webhook wake-up connection lost") });
    parts.add("wake-ups", () => wakeup.stop());
  }
  parts.add("deliveries", async () => {
    shutdown.abort();
    await rounds.idle();
    await Promise.allSettled([...inFlight]);
  });
  parts.add("retry timer", () => retryTimer.clear());
  const poll = setInterval(wake, positive(opts.pollIntervalMs, 1000));
  poll.unref();
  parts.add("poll", () => clearInterval(poll));
  rounds.request();

  return { stop: () => parts.stop() };
}

/**
 * Runs `round` one at a time: a request while a round runs is remembered and answered by one
 * more round after it (a round may also take the request itself, `takeRequest`, when it looks
 * again on its own). A failed round is reported (`again`: the previous round failed too).
 */
class Rounds {
  private running: Promise<void> | null = null;
  private requested = false;
  private failing = false;

  constructor(
    private readonly round: () => Promise<void>,
    private readonly on: { stopped: () => boolean; failed: (err: unknown, again: boolean) => void },
  ) {}

  /** Asks for a round: now when none runs, else right after the running one. */
  request(): void {
    if (this.on.stopped()) return;
    if (this.running) {
      this.requested = true;
      return;
    }
    this.requested = false;
    this.running = this.round()
      .then(
        () => {
          this.failing = false;
        },
        (err: unknown) => {
          this.on.failed(err, this.failing);
          this.failing = true;
        },
      )
      .finally(() => {
        this.running = null;
        // A request that came while this round was finishing gets its own round.
        if (this.requested) this.request();
      });
  }

  /** True when a round was requested since the last call (and clears the request). */
  takeRequest(): boolean {
    const r = this.requested;
    this.requested = false;
    return r;
  }

  /** Resolves when no round runs. */
  async idle(): Promise<void> {
    await this.running;
  }
}

/** One timer that fires `fire` at the earliest instant it was asked for. */
class EarliestTimer {
  private timer: NodeJS.Timeout | null = null;
  private at = Infinity;

  constructor(private readonly fire: () => void) {}

  /** Fires in `ms` unless it already fires sooner. */
  in(ms: number): void {
    const at = Date.now() + ms;
    if (at >= this.at) return;
    this.clear();
    this.at = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.at = Infinity;
      this.fire();
    }, ms);
    this.timer.unref();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.at = Infinity;
  }
}
