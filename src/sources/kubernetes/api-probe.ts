/**
 * A probe of the API server: `GET /version` every `intervalMs`, answered within `timeoutMs`. Any
 * answer below 500 (401, 403 and 404 included) means the server is reachable; a network failure,
 * a timeout or a 5xx means it is not. Informers alone notice a connection that died without
 * closing only after their watchdog; the probe notices within an interval.
 *
 * `unreachableSince()` is when the current run of failures began (the last success before it,
 * or the start); `reachableSince()` when the current run of successes began. Never throws.
 */
import type { KubeTransport } from "./client.js";
import { KubeApiError } from "./errors.js";

/** Options of an ApiServerProbe. */
export interface ApiServerProbeOptions {
  client: KubeTransport;
  intervalMs: number;
  timeoutMs: number;
  /** Called after every probe with its outcome. */
  onProbe?(reachable: boolean): void;
  /** Clock, epoch ms (default Date.now). */
  clock?: () => number;
}

/** The probe (see the module comment). */
export class ApiServerProbe {
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private stopped = false;
  private lastOk: number | undefined;
  private downSince: number | undefined;
  private upSince: number | undefined;
  private readonly startedAt: number;
  private readonly clock: () => number;

  constructor(private readonly opts: ApiServerProbeOptions) {
    this.clock = opts.clock ?? Date.now;
    this.startedAt = this.clock();
  }

  /** Starts probing (the first probe at once). */
  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => void this.probe(), this.opts.intervalMs);
    this.timer.unref();
    void this.probe();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** True unless the last probe failed (before the first answer: unknown, so false). */
  reachable(): boolean {
    return this.upSince !== undefined && this.downSince === undefined;
  }

  /** Since when the API server does not answer (undefined while it does). */
  unreachableSince(): number | undefined {
    return this.downSince;
  }

  /** Since when it answers again (undefined while it does not). */
  reachableSince(): number | undefined {
    return this.downSince === undefined ? this.upSince : undefined;
  }

  /** Epoch ms of the last answer. */
  lastAnswerAt(): number | undefined {
    return this.lastOk;
  }

  /** One probe; resolves with its outcome. */
  async probe(): Promise<boolean> {
    if (this.probing || this.stopped) return this.reachable();
    this.probing = true;
    let answered: boolean;
    try {
      await this.opts.client.request("GET", "/version", { timeoutMs: this.opts.timeoutMs });
      answered = true;
    } catch (err) {
      // Any refusal (401, 403, 404) is an answer: the server is reachable.
      answered = err instanceof KubeApiError && err.status > 0 && err.status < 500;
    } finally {
      this.probing = false;
    }
    if (this.stopped) return answered;
    const now = this.clock();
    if (answered) {
      this.lastOk = now;
      if (this.downSince !== undefined || this.upSince === undefined) this.upSince = now;
      this.downSince = undefined;
    } else {
      this.downSince ??= this.lastOk ?? this.startedAt;
    }
    this.opts.onProbe?.(answered);
    return answered;
  }
}
