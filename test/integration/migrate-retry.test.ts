import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIGRATIONS_TABLE, migrateWhenReachable } from "../../src/store/migrate.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

// Postgres behind a TCP proxy that can be cut: "not reachable yet" without stopping the shared
// server. The data plane (src/api/server.ts) and the controller both start with this.
let db: TestDatabase;
let proxy: TcpProxy;
let viaProxy: string;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  const u = new URL(db.url);
  proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port) });
  u.port = String(proxy.port);
  viaProxy = u.toString();
});
afterAll(async () => {
  await proxy?.close();
  await db?.drop();
});

describe("migrateWhenReachable", () => {
  it("waits while Postgres cannot be reached and migrates once it can, in the same call", async () => {
    proxy.cut();
    const waits: number[] = [];
    const ran = await migrateWhenReachable(viaProxy, {
      info: () => {},
      unreachable: (_err, retryInMs) => {
        waits.push(retryInMs);
        // Reachable again after the second refused attempt.
        if (waits.length === 2) proxy.restore();
      },
    });
    expect(waits).toEqual([250, 500]);
    expect(ran).toContain("0010_revocations");
    const { rows } = await db.pool.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY id`);
    expect(rows.map((r) => r.name)).toEqual(ran);
  });

  it("gives up when told to stop, without migrating", async () => {
    proxy.cut();
    let stop = false;
    const ran = await migrateWhenReachable(viaProxy, { info: () => {}, unreachable: () => (stop = true) }, () => stop);
    proxy.restore();
    expect(ran).toBeNull();
  });

  it("throws at once what is not an outage (a database that does not exist)", async () => {
    const u = new URL(db.url);
    u.pathname = "/writ_no_such_database";
    let unreachable = 0;
    await expect(migrateWhenReachable(u.toString(), { info: () => {}, unreachable: () => unreachable++ })).rejects.toThrow(/does not exist/);
    expect(unreachable).toBe(0);
  });
});
