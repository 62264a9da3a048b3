/**
 * The controller's path (src/verify/revocation/controller-path.ts) on a fake clock and a fake
 * heartbeat table, and the index's freshness over both paths
 * (src/verify/revocation/kube-watch-index.ts): the controller vouches while it observes the
 * cluster; during an outage only when this process cannot reach the API server either, within
 * the outage bound; never once its heartbeat is older than the bound (the controller or Postgres
 * cut off); the grace after it last vouched; LISTEN down is stale whatever the paths say.
 */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { QueryResult, QueryResultRow } from "pg";
import type { Queryable } from "../../../src/store/pool.js";
import type { RevocationSource, RevocationSourceEvents } from "../../../src/store/revocation/channel.js";
import { ControllerPath } from "../../../src/verify/revocation/controller-path.js";
import { WatchedRevocationIndex } from "../../../src/verify/revocation/kube-watch-index.js";

class FakeSource extends EventEmitter<RevocationSourceEvents> implements RevocationSource {
  async start(): Promise<void> {
    this.emit("connected", { reconnect: false });
  }
  async stop(): Promise<void> {}
}

/** Answers the heartbeat read with `row` (or fails), and the index's loads with nothing. */
class FakeDb implements Queryable {
  row: Record<string, unknown> | undefined;
  fail = false;
  async query<R extends QueryResultRow>(text: string): Promise<QueryResult<R>> {
    if (text.includes("controller_heartbeats")) {
      if (this.fail) throw new Error("connection refused");
      const rows = this.row ? [this.row] : [];
      return { rows: rows as R[], rowCount: rows.length, command: "SELECT", oid: 0, fields: [] };
    }
    return { rows: [], rowCount: 0, command: "SELECT", oid: 0, fields: [] };
  }
}

const STALE = 2000;

function setup(opts: { outageMs?: number } = {}) {
  let now = 100_000;
  let unreachable = false;
  let watchStale = false;
  const db = new FakeDb();
  const clock = () => now;
  const path = new ControllerPath({ db, lease: undefined, staleMs: STALE, outageMs: opts.outageMs ?? 60_000, apiUnreachable: () => unreachable, clock });
  const source = new FakeSource();
  const index = new WatchedRevocationIndex({ db, source, staleAfterMs: STALE, clock });
  index.attachWatch({ stale: () => watchStale, staleReason: () => (watchStale ? "the watch is down" : undefined) });
  index.attachControllerPath(path, STALE);
  const heartbeat = (h: { written: number; observed: number; reachable: boolean }) =>
    (db.row = { lease: "writ-controller", identity: "ctl_1", written_age_ms: h.written, observed_age_ms: h.observed, api_reachable: h.reachable });
  return {
    db,
    path,
    index,
    source,
    heartbeat,
    advance: (ms: number) => (now += ms),
    at: () => now,
    set: (o: { unreachable?: boolean; watchStale?: boolean }) => {
      unreachable = o.unreachable ?? unreachable;
      watchStale = o.watchStale ?? watchStale;
    },
  };
}

describe("ControllerPath.vouch", () => {
  it("vouches while the controller observes the cluster, and stops when its heartbeat or observation ages past the bound", async () => {
    const t = setup();
    expect(t.path.vouch()).toBeUndefined();
    t.heartbeat({ written: 200, observed: 300, reachable: true });
    await t.path.poll();
    expect(t.path.vouch()?.path).toBe("controller");
    t.advance(STALE - 300);
    expect(t.path.vouch()?.path).toBe("controller");
    t.advance(301);
    expect(t.path.vouch()).toBeUndefined(); // observed 2001 ms ago
    t.heartbeat({ written: 0, observed: 3000, reachable: true });
    await t.path.poll();
    expect(t.path.vouch()).toBeUndefined();
  });

  it("stops vouching when Postgres cannot be read: the last reading keeps ageing", async () => {
    const t = setup();
    t.heartbeat({ written: 0, observed: 0, reachable: true });
    await t.path.poll();
    t.db.fail = true;
    t.advance(1500);
    await t.path.poll();
    expect(t.path.vouch()?.path).toBe("controller");
    expect(t.path.heartbeatAgeMs()).toBe(1500);
    t.advance(501);
    expect(t.path.vouch()).toBeUndefined();
  });

  it("vouches during an outage only when this process cannot reach the API server either, within the outage bound", async () => {
    const t = setup({ outageMs: 30_000 });
    t.heartbeat({ written: 100, observed: 20_000, reachable: false });
    await t.path.poll();
    expect(t.path.vouch()).toBeUndefined(); // this process still reaches the API server
    t.set({ unreachable: true });
    expect(t.path.vouch()).toMatchObject({ path: "outage", detail: expect.stringContaining("unreachable from this process and from the controller") });
    t.heartbeat({ written: 100, observed: 30_001, reachable: false });
    await t.path.poll();
    expect(t.path.vouch()).toBeUndefined();
    const off = setup({ outageMs: 0 });
    off.set({ unreachable: true });
    off.heartbeat({ written: 0, observed: 0, reachable: false });
    await off.path.poll();
    expect(off.path.vouch()).toBeUndefined();
  });
});

describe("WatchedRevocationIndex.freshness", () => {
  it("is fresh by the watch, else by the controller, else for the grace after it last vouched, else stale", async () => {
    const t = setup();
    await t.index.start();
    expect(t.index.freshness()).toEqual({ stale: false, via: "watch" });
    t.set({ watchStale: true });
    expect(t.index.freshness()).toEqual({ stale: true, detail: "the watch is down" });
    t.heartbeat({ written: 0, observed: 0, reachable: true });
    await t.path.poll();
    expect(t.index.freshness()).toMatchObject({ stale: false, via: "controller" });
    expect(t.index.degradedReason()).toContain("observes the cluster");
    t.advance(STALE + 1); // the heartbeat is now too old: the grace, counted from when it last vouched
    expect(t.index.freshness()).toMatchObject({ stale: true });
    const u = setup();
    await u.index.start();
    u.set({ watchStale: true });
    u.heartbeat({ written: 0, observed: 0, reachable: true });
    await u.path.poll();
    expect(u.index.freshness().via).toBe("controller");
    u.advance(1500);
    expect(u.index.freshness().via).toBe("controller");
    u.advance(1000); // no longer vouching, but vouched 1000 ms ago
    expect(u.index.freshness()).toMatchObject({ stale: false, via: "grace" });
    u.advance(STALE);
    expect(u.index.stale()).toBe(true);
    expect(u.index.staleReason()).toBe("the watch is down");
  });

  it("is stale while LISTEN is down, whatever the paths say", async () => {
    const t = setup();
    await t.index.start();
    t.heartbeat({ written: 0, observed: 0, reachable: true });
    await t.path.poll();
    t.source.emit("disconnected", { error: new Error("gone"), retryInMs: 10 });
    t.advance(STALE + 1);
    expect(t.index.freshness()).toMatchObject({ stale: true, detail: expect.stringContaining("LISTEN") });
  });
});
