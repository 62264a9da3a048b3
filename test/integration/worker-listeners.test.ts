/**
 * The LISTEN connections a data-plane process keeps on the workers of a Citus cluster
 * (src/store/revocation/worker-listeners.ts), against a plain Postgres standing in for a
 * worker (a worker is a Postgres the process LISTENs on), reached through a TCP proxy that can
 * cut it: notices are heard, `allListening` is false while the worker cannot be reached, the
 * caches are told to reset when its LISTEN is lost and again when it is made anew, and the worker
 * list is asked for again when a connection drops. On plain Postgres the worker list is empty.
 * (test/integration/citus.test.ts runs the same through `writ serve` on a real cluster.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCitusWorkers, WorkerListeners, type WorkerListenersOptions } from "../../src/store/revocation/worker-listeners.js";
import type { ChangeNotice } from "../../src/store/changes.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

let db: TestDatabase;
let proxy: TcpProxy;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  const u = new URL(db.url);
  proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port) });
});
afterAll(async () => {
  await proxy?.close();
  await db?.drop();
});

/** Polls `cond` (bounded), not a sleep. */
async function until(cond: () => boolean, what: string, boundMs = 10_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`not within ${boundMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("WorkerListeners", () => {
  it("finds no workers on plain Postgres", async () => {
    const c = await db.pool.connect();
    try {
      expect(await readCitusWorkers(c)).toEqual([]);
    } finally {
      c.release();
    }
  });

  it("hears a worker's notices, and while the worker cannot be reached says so and resets the caches", async () => {
    const u = new URL(db.url);
    const notices: ChangeNotice[] = [];
    let resets = 0;
    let refreshes = 0;
    const opts: WorkerListenersOptions = {
      onNotice: (c) => notices.push(c),
      onReset: () => resets++,
      requestRefresh: () => refreshes++,
      minBackoffMs: 20,
      maxBackoffMs: 100,
    };
    const set = new WorkerListeners(opts);
    try {
      set.sync([{ host: "127.0.0.1", port: proxy.port }], {
        user: decodeURIComponent(u.username),
        password: decodeURIComponent(u.password),
        database: u.pathname.slice(1),
      });
      expect(set.allListening).toBe(false); // not connected yet
      await until(() => set.allListening, "listening on the worker");
      const resetsWhenUp = resets;
      expect(resetsWhenUp).toBeGreaterThanOrEqual(2); // the set changed, then its LISTEN became active
      await db.pool.query("NOTIFY writ_changes, 'agent:a1'");
      await until(() => notices.length === 1, "the worker's notice");
      expect(notices).toEqual([{ kind: "agent", agentId: "a1" }]);

      proxy.cut();
      await until(() => !set.allListening, "the worker's loss noticed");
      expect(resets).toBe(resetsWhenUp + 1);
      expect(refreshes).toBeGreaterThanOrEqual(1); // the worker list is read again
      proxy.restore();
      await until(() => set.allListening, "listening on the worker again");
      expect(resets).toBe(resetsWhenUp + 2);
      await db.pool.query("NOTIFY writ_changes, 'keys'");
      await until(() => notices.length === 2, "a notice after the reconnection");
      expect(notices[1]).toEqual({ kind: "keys" });

      // A worker no longer listed is closed; an empty set listens on nothing.
      set.sync([], {});
      expect(set.workers).toEqual([]);
      expect(set.allListening).toBe(true);
    } finally {
      set.stop();
    }
  });
});
