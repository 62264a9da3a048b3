/**
 * A LISTEN connection on `writ_revocations` that emits every revocation the channel carries:
 * announcements of revoked delegations and agreements (src/store/revocation/announce.ts) and
 * the revocation feed's notices (src/store/notify.ts), both as `RevocationAnnouncement`s. The
 * same connection listens on `writ_changes` (src/store/changes.ts) and emits `changed`, which
 * the process's caches follow (one listening connection per process).
 *
 * Promise (as RevocationListener's): it listens on a dedicated connection (never a pool
 * client), reconnects after any loss with capped exponential backoff and jitter, emits
 * `connected` after every (re)connection (NOTIFY is not durable: the consumer re-reads the
 * tables then) and never throws from a background callback.
 *
 * On a Citus coordinator the channel also listens on `writ_changes` on every worker
 * (./worker-listeners.ts), where the triggers of distributed tables' shards send their notices;
 * `listening` is then true only while every worker's LISTEN is active too, and
 * `changes-reset` is emitted whenever one is lost or made anew (the caches drop everything).
 *
 * (RevocationListener of src/store/notify.ts emits only feed notices; this one emits both.)
 */
import { EventEmitter } from "node:events";
import type { Client, ClientConfig } from "pg";
import { newClient } from "../cluster.js";
import { CHANGES_CHANNEL, parseChangeNotice, type ChangeNotice } from "../changes.js";
import { REVOCATIONS_CHANNEL } from "../notify.js";
import { parseRevocationPayload, type RevocationAnnouncement } from "./announce.js";
import { readCitusWorkers, WORKER_REFRESH_MS, WorkerListeners } from "./worker-listeners.js";

/** Events of a revocation source (this channel, or a fake in tests). */
export interface RevocationSourceEvents {
  /** Ids were revoked. */
  revoked: [RevocationAnnouncement];
  /** LISTEN is active; `reconnect` is true after a loss. */
  connected: [{ reconnect: boolean }];
  /** The connection was lost or could not be made; a retry follows after `retryInMs`. */
  disconnected: [{ error: Error; retryInMs: number }];
  /** A change notice (`writ_changes`). */
  changed: [ChangeNotice];
  /** Change notices from a Citus worker may have been missed, or are heard again: drop every cached value. */
  "changes-reset": [];
}

/** What the revocation index consumes. */
export interface RevocationSource extends EventEmitter<RevocationSourceEvents> {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Options of a RevocationChannel. */
export interface RevocationChannelOptions {
  connection: string | ClientConfig;
  /** First retry delay (default 100 ms), doubled per failure up to `maxBackoffMs` (default 2000 ms). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** application_name of the connection (default "writ-revocation-index"). */
  applicationName?: string;
  /** Listen on the Citus workers too (default true; a process that follows no change notices turns it off). */
  workerNotices?: boolean;
  /** How often the Citus worker list is read again (default WORKER_REFRESH_MS). */
  workerRefreshMs?: number;
}

/** The LISTEN connection (see the module comment). */
export class RevocationChannel extends EventEmitter<RevocationSourceEvents> implements RevocationSource {
  private client: Client | null = null;
  private stopped = false;
  private everConnected = false;
  private failures = 0;
  private timer: NodeJS.Timeout | null = null;
  private firstConnect: Promise<void> | null = null;
  private resolveFirst: (() => void) | null = null;
  private pid: number | undefined;
  private readonly workers: WorkerListeners;
  private refreshTimer: NodeJS.Timeout | null = null;
  private refreshing = false;

  constructor(private readonly opts: RevocationChannelOptions) {
    super();
    this.workers = new WorkerListeners({
      onNotice: (c) => this.emit("changed", c),
      onReset: () => this.emit("changes-reset"),
      requestRefresh: () => void this.refreshWorkers(),
      minBackoffMs: opts.minBackoffMs,
      maxBackoffMs: opts.maxBackoffMs,
    });
  }

  /** True while LISTEN is active, on the coordinator and every Citus worker (no notice can have been missed since `connected`). */
  get listening(): boolean {
    return this.client !== null && this.workers.allListening;
  }

  /** The Citus workers listened on (empty on plain Postgres). */
  get workerAddresses(): { host: string; port: number }[] {
    return this.workers.workers;
  }

  /** Backend process id of the current connection (undefined while disconnected). */
  get backendPid(): number | undefined {
    return this.client ? this.pid : undefined;
  }

  /** Starts listening; resolves at the first active LISTEN (or on stop). Failures retry in the background. */
  start(): Promise<void> {
    if (!this.firstConnect) {
      this.firstConnect = new Promise((resolve) => (this.resolveFirst = resolve));
      void this.connect();
    }
    return this.firstConnect;
  }

  /** Stops listening and closes the connection; nothing is emitted afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    this.refreshTimer = null;
    this.workers.stop();
    const c = this.client;
    this.client = null;
    if (c) await c.end().catch(() => {});
    this.resolveFirst?.();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = newClient(this.opts.connection, { keepAlive: true, application_name: this.opts.applicationName ?? "writ-revocation-index" });
    let lost = false;
    const onLost = (err: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      this.workers.clear();
      client.removeAllListeners("notification");
      void client.end().catch(() => {});
      this.retry(err);
    };
    client.on("error", onLost);
    client.on("end", () => onLost(new Error("revocation channel connection ended")));
    client.on("notification", (msg) => {
      if (this.stopped) return;
      if (msg.channel === CHANGES_CHANNEL) {
        const c = parseChangeNotice(msg.payload);
        if (c) this.emit("changed", c);
        return;
      }
      if (msg.channel !== REVOCATIONS_CHANNEL) return;
      const a = parseRevocationPayload(msg.payload);
      if (a) this.emit("revoked", a);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${REVOCATIONS_CHANNEL}; LISTEN ${CHANGES_CHANNEL}`);
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      this.pid = rows[0]?.pid;
    } catch (e) {
      onLost(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    if (this.stopped || lost) {
      if (!lost) await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.failures = 0;
    if (this.opts.workerNotices !== false) {
      await this.refreshWorkers();
      if (this.client !== client) return;
      if (!this.refreshTimer) {
        this.refreshTimer = setInterval(() => void this.refreshWorkers(), this.opts.workerRefreshMs ?? WORKER_REFRESH_MS);
        this.refreshTimer.unref();
      }
    }
    const reconnect = this.everConnected;
    this.everConnected = true;
    this.emit("connected", { reconnect });
    this.resolveFirst?.();
  }

  /** Reads the Citus workers through the coordinator connection and listens on them (nothing on plain Postgres). */
  private async refreshWorkers(): Promise<void> {
    const c = this.client;
    if (!c || this.stopped || this.refreshing || this.opts.workerNotices === false) return;
    this.refreshing = true;
    try {
      const workers = await readCitusWorkers(c);
      if (this.client !== c || this.stopped) return;
      const p = c as unknown as { user?: string; password?: string; database?: string; ssl?: ClientConfig["ssl"] };
      this.workers.sync(workers, { user: p.user, password: p.password, database: p.database, ...(p.ssl ? { ssl: p.ssl } : {}) });
    } catch {
      // The coordinator connection's own events handle its loss; the next refresh retries.
    } finally {
      this.refreshing = false;
    }
  }

  private retry(error: Error): void {
    if (this.stopped) return;
    const min = this.opts.minBackoffMs ?? 100;
    const base = Math.min(this.opts.maxBackoffMs ?? 2000, min * 2 ** Math.min(this.failures, 20));
    this.failures += 1;
    const retryInMs = Math.round(base / 2 + Math.random() * (base / 2));
    this.emit("disconnected", { error, retryInMs });
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, retryInMs);
  }
}
