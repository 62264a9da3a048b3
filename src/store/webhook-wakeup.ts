/**
 * Wakes the delivery worker when an alert is enqueued: LISTEN `writ_webhooks` on a dedicated
 * connection (never a pool client, so the API's pool keeps every connection).
 *
 * Promise: best effort only. The worker's poll is the durable path; this makes new alerts go
 * out promptly. It reconnects after a connection loss with capped exponential backoff, calls
 * `onWake` after every (re)connection (to catch up on notices missed meanwhile), and never
 * throws from a background callback.
 */
import { newClient } from "./cluster.js";
import type { Client, ClientConfig } from "pg";
import { WEBHOOKS_CHANNEL } from "./webhook-outbox.js";

/** A running listener. */
export interface Wakeup {
  stop(): Promise<void>;
}

/** Options of `listenForWakeups`. */
export interface WakeupOptions {
  connection: ClientConfig;
  onWake: () => void;
  /** Told about connection problems (never throws). */
  onError?: (err: Error) => void;
  /** Largest reconnect delay (default 5000 ms). */
  maxBackoffMs?: number;
}

/** Starts listening in the background (see the module comment). */
export function listenForWakeups(opts: WakeupOptions): Wakeup {
  let stopped = false;
  let client: Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let failures = 0;
  const maxBackoff = opts.maxBackoffMs ?? 5000;

  const retry = (err: Error) => {
    if (stopped || timer) return;
    opts.onError?.(err);
    const base = Math.min(maxBackoff, 100 * 2 ** Math.min(failures, 16));
    failures += 1;
    timer = setTimeout(
      () => {
        timer = null;
        void connect();
      },
      Math.round(base / 2 + (Math.random() * base) / 2),
    );
    timer.unref();
  };

  const connect = async () => {
    if (stopped) return;
    const c = newClient(opts.connection, { keepAlive: true, application_name: "writ-webhook-wakeup" });
    let lost = false;
    const onLost = (err: Error) => {
      if (lost) return;
      lost = true;
      if (client === c) client = null;
      c.removeAllListeners("notification");
      void c.end().catch(() => {});
      retry(err);
    };
    c.on("error", onLost);
    c.on("end", () => onLost(new Error("wake-up connection ended")));
    c.on("notification", (msg) => {
      if (msg.channel === WEBHOOKS_CHANNEL) opts.onWake();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${WEBHOOKS_CHANNEL}`);
    } catch (e) {
      onLost(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    if (stopped || lost) {
      if (!lost) {
        lost = true;
        await c.end().catch(() => {});
      }
      return;
    }
    client = c;
    failures = 0;
    opts.onWake();
  };

  void connect();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners("end");
        c.removeAllListeners("notification");
        await c.end().catch(() => {});
      }
    },
  };
}
