/**
 * LISTEN `writ_changes` on every worker of a Citus cluster (docs/scale.md, "Change notices from
 * workers"). A trigger of a distributed table fires on the worker holding the row's shard, and
 * its NOTIFY reaches that worker's listeners only; so each data-plane process listens on the
 * coordinator (./channel.ts) and, through this set, on every worker.
 *
 * Promises:
 * - The workers are the active primaries of `pg_dist_node` other than the coordinator (group 0),
 *   read through the coordinator's LISTEN connection: when it (re)connects, whenever a worker's
 *   connection drops, and every `refreshMs` (a worker added to the cluster is listened to
 *   within that bound). On plain Postgres (no Citus catalog) the set is empty.
 * - A worker is reached with the coordinator connection's user, password, database and TLS
 *   settings, at the host and port `pg_dist_node` names.
 * - `allListening` is true only while every known worker has an active LISTEN. A worker that
 *   cannot be reached (or whose connection drops) makes it false, and `onReset` is called then
 *   and again when its LISTEN is active anew: the caches drop everything, and serve nothing
 *   while it is false (a notice may have been missed), as they do for a lost coordinator
 *   connection. Revocations are not carried here (they are announced on the coordinator).
 * - Lost connections are retried with capped exponential backoff and jitter; nothing throws
 *   from a background callback.
 */
import pg from "pg";
import type { Client, ClientConfig } from "pg";
import { CHANGES_CHANNEL, parseChangeNotice, type ChangeNotice } from "../changes.js";

/** How often the worker list is read again while nothing drops (ms). */
export const WORKER_REFRESH_MS = 30_000;

/** A worker as `pg_dist_node` names it. */
export interface WorkerAddress {
  host: string;
  port: number;
}

/** The workers of the cluster the coordinator connection `c` is on (empty without Citus, or when `c` is not on the coordinator). */
export async function readCitusWorkers(c: Pick<Client, "query">): Promise<WorkerAddress[]> {
  const { rows } = await c.query<{ citus: boolean }>("SELECT to_regclass('pg_catalog.pg_dist_node') IS NOT NULL AS citus");
  if (rows[0]?.citus !== true) return [];
  const r = await c.query<{ host: string; port: number }>(
    `SELECT nodename AS host, nodeport AS port FROM pg_catalog.pg_dist_node
      WHERE groupid <> 0 AND noderole = 'primary' AND isactive
        AND (SELECT groupid FROM pg_catalog.pg_dist_local_group) = 0
      ORDER BY nodename, nodeport`,
  );
  return r.rows.map((w) => ({ host: w.host, port: Number(w.port) }));
}

/** Options of a WorkerListeners set. */
export interface WorkerListenersOptions {
  /** A change notice from a worker. */
  onNotice: (c: ChangeNotice) => void;
  /** A worker's LISTEN was lost or is active anew (see the module comment). */
  onReset: () => void;
  /** A worker's connection failed (for logs). */
  onError?: (worker: WorkerAddress, error: Error) => void;
  /** Asks for the worker list to be read again (through the coordinator connection). */
  requestRefresh: () => void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  applicationName?: string;
}

interface Listener {
  readonly address: WorkerAddress;
  client: Client | null;
  failures: number;
  timer: NodeJS.Timeout | null;
  closed: boolean;
}

const key = (w: WorkerAddress) => `${w.host}:${w.port}`;

/** The LISTEN connections to the workers (see the module comment). */
export class WorkerListeners {
  private readonly listeners = new Map<string, Listener>();
  private base: ClientConfig = {};
  private stopped = false;

  constructor(private readonly opts: WorkerListenersOptions) {}

  /** True while every known worker has an active LISTEN (true when there are none). */
  get allListening(): boolean {
    for (const l of this.listeners.values()) if (l.client === null) return false;
    return true;
  }

  /** Workers currently known. */
  get workers(): WorkerAddress[] {
    return [...this.listeners.values()].map((l) => l.address);
  }

  /**
   * Listens on exactly `workers` from now on, reaching them with `base` (the coordinator
   * connection's credentials; host and port are replaced). New ones are connected, gone ones
   * closed; a change of the set resets the caches.
   */
  sync(workers: WorkerAddress[], base: ClientConfig): void {
    if (this.stopped) return;
    this.base = base;
    const wanted = new Map(workers.map((w) => [key(w), w]));
    let changed = false;
    for (const [k, l] of this.listeners)
      if (!wanted.has(k)) {
        this.close(l);
        this.listeners.delete(k);
        changed = true;
      }
    for (const [k, w] of wanted)
      if (!this.listeners.has(k)) {
        const l: Listener = { address: w, client: null, failures: 0, timer: null, closed: false };
        this.listeners.set(k, l);
        changed = true;
        void this.connect(l);
      }
    if (changed) this.opts.onReset();
  }

  /** Closes every worker connection (the coordinator connection was lost, or the channel stops). */
  clear(): void {
    for (const l of this.listeners.values()) this.close(l);
    this.listeners.clear();
  }

  /** Closes everything; nothing is called afterwards. */
  stop(): void {
    this.stopped = true;
    this.clear();
  }

  private close(l: Listener): void {
    l.closed = true;
    if (l.timer) clearTimeout(l.timer);
    l.timer = null;
    const c = l.client;
    l.client = null;
    if (c) {
      c.removeAllListeners("notification");
      void c.end().catch(() => {});
    }
  }

  private async connect(l: Listener): Promise<void> {
    if (l.closed || this.stopped) return;
    const client = new pg.Client({
      ...this.base,
      host: l.address.host,
      port: l.address.port,
      keepAlive: true,
      application_name: this.opts.applicationName ?? "writ-change-notices",
    });
    let lost = false;
    const onLost = (err: Error) => {
      if (lost) return;
      lost = true;
      const wasListening = l.client === client;
      if (wasListening) l.client = null;
      client.removeAllListeners("notification");
      void client.end().catch(() => {});
      if (l.closed || this.stopped) return;
      this.opts.onError?.(l.address, err);
      if (wasListening) this.opts.onReset();
      this.opts.requestRefresh();
      this.retry(l);
    };
    client.on("error", onLost);
    client.on("end", () => onLost(new Error(`change notices of worker ${key(l.address)}: connection ended`)));
    client.on("notification", (msg) => {
      if (this.stopped || l.closed || msg.channel !== CHANGES_CHANNEL) return;
      const c = parseChangeNotice(msg.payload);
      if (c) this.opts.onNotice(c);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (e) {
      onLost(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    if (lost) return;
    if (l.closed || this.stopped) {
      await client.end().catch(() => {});
      return;
    }
    l.client = client;
    l.failures = 0;
    this.opts.onReset();
  }

  private retry(l: Listener): void {
    if (l.closed || this.stopped || l.timer) return;
    const min = this.opts.minBackoffMs ?? 100;
    const base = Math.min(this.opts.maxBackoffMs ?? 2000, min * 2 ** Math.min(l.failures, 20));
    l.failures += 1;
    const wait = Math.round(base / 2 + Math.random() * (base / 2));
    l.timer = setTimeout(() => {
      l.timer = null;
      void this.connect(l);
    }, wait);
  }
}
