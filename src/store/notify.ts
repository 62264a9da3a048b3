/**
 * Revocation announcements over Postgres LISTEN/NOTIFY on the channel `writ_revocations`.
 *
 * Payload (JSON, well under NOTIFY's 8000-byte limit): `{sequence, revocation_id,
 * agreement_id, mandate_hash, at}`. NOTIFY is delivered only to sessions listening at commit
 * time and is not stored: a `RevocationListener` emits `connected` after every (re)connection,
 * and a consumer must then catch up from the pull list (`listRevocations(after = last sequence
 * seen)`), which is the durable record. Notices may therefore arrive twice; `sequence` orders
 * and deduplicates them.
 *
 * Promise of `RevocationListener`: it LISTENs on a dedicated connection (never a pool client),
 * reconnects after any connection loss with exponential backoff (with jitter, capped), and
 * never throws from a background callback.
 */
import { EventEmitter } from "node:events";
import pg from "pg";
import type { Client, ClientConfig } from "pg";
import { isHashString, type HashString } from "../core/canonical/index.js";
import type { Queryable } from "./pool.js";

/** The NOTIFY channel of the revocation feed. */
export const REVOCATIONS_CHANNEL = "writ_revocations";

/** What a revocation announcement carries. */
export interface RevocationNotice {
  sequence: number;
  revocation_id: HashString;
  agreement_id: string;
  mandate_hash: string;
  at: string;
}

/** Sends `NOTIFY writ_revocations, '<json>'` (delivered when the caller's transaction commits). */
export async function notifyRevocation(db: Queryable, notice: RevocationNotice): Promise<void> {
  await db.query("SELECT pg_notify($1, $2)", [REVOCATIONS_CHANNEL, JSON.stringify(notice)]);
}

/** Parses a NOTIFY payload; undefined when it is not a well-formed notice. */
export function parseRevocationNotice(payload: string | undefined): RevocationNotice | undefined {
  if (payload === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const n = v as Record<string, unknown>;
  if (!Number.isSafeInteger(n.sequence) || (n.sequence as number) < 1) return undefined;
  if (!isHashString(n.revocation_id)) return undefined;
  if (typeof n.agreement_id !== "string" || typeof n.mandate_hash !== "string" || typeof n.at !== "string") return undefined;
  return {
    sequence: n.sequence as number,
    revocation_id: n.revocation_id,
    agreement_id: n.agreement_id,
    mandate_hash: n.mandate_hash,
    at: n.at,
  };
}

/** Events of a RevocationListener. */
export interface RevocationListenerEvents {
  /** A revocation was announced. */
  revocation: [RevocationNotice];
  /** LISTEN is active; `reconnect` is true after a loss (catch up from the pull list now). */
  connected: [{ reconnect: boolean }];
  /** The connection was lost or could not be made; a retry is scheduled after `retryInMs`. */
  disconnected: [{ error: Error; retryInMs: number }];
}

/** Options of a RevocationListener. */
export interface RevocationListenerOptions {
  /** Connection string or pg client config of the database to listen on. */
  connection: string | ClientConfig;
  /** First retry delay (default 100 ms); doubles per failure up to `maxBackoffMs`. */
  minBackoffMs?: number;
  /** Largest retry delay (default 5000 ms). */
  maxBackoffMs?: number;
}

/** LISTENs for revocation announcements and emits them (see the module comment). */
export class RevocationListener extends EventEmitter<RevocationListenerEvents> {
  private client: Client | null = null;
  private stopped = false;
  private everConnected = false;
  private failures = 0;
  private timer: NodeJS.Timeout | null = null;
  private firstConnect: Promise<void> | null = null;
  private resolveFirst: (() => void) | null = null;
  private readonly minBackoff: number;
  private readonly maxBackoff: number;

  constructor(private readonly opts: RevocationListenerOptions) {
    super();
    this.minBackoff = opts.minBackoffMs ?? 100;
    this.maxBackoff = opts.maxBackoffMs ?? 5000;
  }

  /** True while LISTEN is active. */
  get listening(): boolean {
    return this.client !== null;
  }

  /**
   * Starts listening. Resolves once the first LISTEN is active; connection failures are retried
   * in the background (observe `disconnected`), so it waits as long as the database is down.
   */
  start(): Promise<void> {
    if (!this.firstConnect) {
      this.firstConnect = new Promise((resolve) => (this.resolveFirst = resolve));
      void this.connect();
    }
    return this.firstConnect;
  }

  /** Stops listening and closes the connection; no event is emitted afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const c = this.client;
    this.client = null;
    if (c) await c.end().catch(() => {});
    this.resolveFirst?.();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const config = typeof this.opts.connection === "string" ? { connectionString: this.opts.connection } : this.opts.connection;
    const client = new pg.Client({ ...config, keepAlive: true, application_name: "writ-revocation-listener" });
    let lost = false;
    const onLost = (err: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      client.removeAllListeners("notification");
      void client.end().catch(() => {});
      this.retry(err);
    };
    client.on("error", onLost);
    client.on("end", () => onLost(new Error("listener connection ended")));
    client.on("notification", (msg) => {
      if (msg.channel !== REVOCATIONS_CHANNEL) return;
      const notice = parseRevocationNotice(msg.payload);
      if (notice) this.emit("revocation", notice);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${REVOCATIONS_CHANNEL}`);
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
    const reconnect = this.everConnected;
    this.everConnected = true;
    this.emit("connected", { reconnect });
    this.resolveFirst?.();
  }

  private retry(error: Error): void {
    if (this.stopped) return;
    const base = Math.min(this.maxBackoff, this.minBackoff * 2 ** Math.min(this.failures, 20));
    this.failures += 1;
    const retryInMs = Math.round(base / 2 + Math.random() * (base / 2));
    this.emit("disconnected", { error, retryInMs });
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, retryInMs);
  }
}
