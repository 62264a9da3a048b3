import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { hashOf } from "../../src/core/canonical/index.js";
import { notifyRevocation, REVOCATIONS_CHANNEL, type RevocationNotice } from "../../src/store/notify.js";
import type { RevocationAnnouncement } from "../../src/store/revocation/announce.js";
import { RevocationChannel } from "../../src/store/revocation/channel.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await db?.drop();
});

function notice(sequence: number): RevocationNotice {
  return { sequence, revocation_id: hashOf({ sequence }), agreement_id: `agr_${sequence}`, mandate_hash: hashOf({ m: sequence }), at: "2026-01-01T00:00:00Z" };
}

/** What the channel makes of a revocation-feed notice: the agreement it revokes. */
function announced(sequence: number): RevocationAnnouncement {
  return { kind: "agreement", org: "", ids: [`agr_${sequence}`] };
}

describe("RevocationChannel (revocation-feed notices)", () => {
  it("emits notices sent with notifyRevocation once their transaction commits", async () => {
    const listener = new RevocationChannel({ connection: db.url });
    const got: RevocationAnnouncement[] = [];
    listener.on("revoked", (n) => got.push(n));
    await listener.start();
    try {
      const c = await db.pool.connect();
      try {
        await c.query("BEGIN");
        await notifyRevocation(c, notice(1));
        await new Promise((r) => setTimeout(r, 100));
        expect(got).toEqual([]); // not before COMMIT
        await c.query("COMMIT");
        await c.query("BEGIN");
        await notifyRevocation(c, notice(99));
        await c.query("ROLLBACK");
      } finally {
        c.release();
      }
      await expect.poll(() => got).toEqual([announced(1)]);
      await new Promise((r) => setTimeout(r, 100));
      expect(got).toEqual([announced(1)]); // the rolled-back one never arrives
    } finally {
      await listener.stop();
    }
  });

  it("ignores malformed payloads on the channel", async () => {
    const listener = new RevocationChannel({ connection: db.url });
    const got: RevocationAnnouncement[] = [];
    listener.on("revoked", (n) => got.push(n));
    await listener.start();
    try {
      await db.pool.query("SELECT pg_notify($1, $2)", [REVOCATIONS_CHANNEL, "not json"]);
      await db.pool.query("SELECT pg_notify($1, $2)", [REVOCATIONS_CHANNEL, JSON.stringify({ sequence: "1" })]);
      await notifyRevocation(db.pool, notice(2));
      await expect.poll(() => got).toEqual([announced(2)]);
    } finally {
      await listener.stop();
    }
  });

  it("reconnects with backoff after its connection is killed, and says so", async () => {
    const listener = new RevocationChannel({ connection: db.url, minBackoffMs: 20, maxBackoffMs: 200 });
    const got: RevocationAnnouncement[] = [];
    const connected: boolean[] = [];
    let disconnects = 0;
    listener.on("revoked", (n) => got.push(n));
    listener.on("connected", (e) => connected.push(e.reconnect));
    listener.on("disconnected", () => disconnects++);
    await listener.start();
    try {
      expect(connected).toEqual([false]);
      await db.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'writ-revocation-index' AND datname = $1", [
        db.name,
      ]);
      await expect.poll(() => connected, { timeout: 10_000 }).toEqual([false, true]);
      expect(disconnects).toBeGreaterThanOrEqual(1);
      await notifyRevocation(db.pool, notice(3));
      await expect.poll(() => got).toEqual([announced(3)]);
    } finally {
      await listener.stop();
    }
  });

  it("keeps retrying while the database is unreachable and stops cleanly", async () => {
    const listener = new RevocationChannel({ connection: "postgres://x:y@127.0.0.1:1/none", minBackoffMs: 10, maxBackoffMs: 40 });
    const delays: number[] = [];
    listener.on("disconnected", (e) => delays.push(e.retryInMs));
    const started = listener.start();
    await expect.poll(() => delays.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(4);
    expect(Math.max(...delays)).toBeLessThanOrEqual(40);
    await listener.stop();
    await started; // resolves on stop
    const n = delays.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(delays.length).toBe(n);
    expect(listener.backendPid).toBeUndefined();
  });

  it("does not hold a pool client (uses a dedicated connection)", async () => {
    const listener = new RevocationChannel({ connection: db.url });
    await listener.start();
    try {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      const { rows } = await c.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'writ-revocation-index' AND datname = $1",
        [db.name],
      );
      await c.end();
      expect(Number(rows[0]?.n)).toBe(1);
    } finally {
      await listener.stop();
    }
  });
});
