/**
 * The controller's heartbeat table on a real Postgres (src/store/controller-heartbeat.ts): the
 * leader takes the row over, a former leader updates only a row it holds, ages come back on the
 * database's clock (the observed lag the writer gave included), and a read names a Lease or
 * takes the most recent row.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readHeartbeat, writeHeartbeat } from "../../src/store/controller-heartbeat.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

describe("controller heartbeats", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("lets the leader take the row over and a former leader update only its own", async () => {
    expect(await readHeartbeat(db.pool)).toBeUndefined();
    expect(await writeHeartbeat(db.pool, { lease: "l", identity: "a", observedLagMs: 1500, apiReachable: true, takeOver: true })).toBe(true);
    const first = await readHeartbeat(db.pool, "l");
    expect(first).toMatchObject({ lease: "l", identity: "a", apiReachable: true });
    expect(first?.writtenAgeMs).toBeLessThan(1000);
    expect(first?.observedAgeMs).toBeGreaterThanOrEqual(1500);
    expect(first?.observedAgeMs).toBeLessThan(2500);

    expect(await writeHeartbeat(db.pool, { lease: "l", identity: "b", observedLagMs: 0, apiReachable: true, takeOver: true })).toBe(true);
    // "a" lost the lease: it may no longer write the row "b" holds.
    expect(await writeHeartbeat(db.pool, { lease: "l", identity: "a", observedLagMs: 0, apiReachable: false, takeOver: false })).toBe(false);
    expect(await readHeartbeat(db.pool, "l")).toMatchObject({ identity: "b", apiReachable: true });
    // "b", paused by an outage (not leading), keeps its own row up to date.
    expect(await writeHeartbeat(db.pool, { lease: "l", identity: "b", observedLagMs: 0, apiReachable: false, takeOver: false })).toBe(true);
    expect(await readHeartbeat(db.pool, "l")).toMatchObject({ identity: "b", apiReachable: false });
  });

  it("reads the named Lease, or the most recently written row", async () => {
    await writeHeartbeat(db.pool, { lease: "other", identity: "c", observedLagMs: 0, apiReachable: true, takeOver: true });
    expect((await readHeartbeat(db.pool))?.lease).toBe("other");
    expect((await readHeartbeat(db.pool, "l"))?.identity).toBe("b");
    expect(await readHeartbeat(db.pool, "missing")).toBeUndefined();
  });
});
