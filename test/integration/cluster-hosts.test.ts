/**
 * A multi-host DATABASE_URL against the run's real Postgres, reached through TCP forwarders on
 * 127.0.0.1 that the test opens and cuts (a host "dying"), and a database turned read-only (a
 * primary "demoted" to a standby): the pool follows the host that is the wanted kind of server
 * without being re-created, refuses with SQLSTATE 08001 (the API's 503) while none is, and
 * recovers by itself. The real failover, with Patroni, is test/e2e/failover.test.ts.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../src/dev/free-port.js";
import { isDbUnavailable } from "../../src/store/db-errors.js";
import { resolverFor } from "../../src/store/cluster.js";
import { createPool } from "../../src/store/pool.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** A TCP forwarder on 127.0.0.1 to `target`; `cut()` closes it and every connection through it. */
async function forwarder(target: number): Promise<{ port: number; cut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = connect(target, "127.0.0.1");
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    port,
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

let db: TestDatabase;
let pgPort: number;
const pools: pg.Pool[] = [];
const servers: TestServer[] = [];

function clusterUrl(ports: number[], attrs: string): string {
  const u = new URL(db.url);
  return `postgres://${u.username}:${u.password}@${ports.map((p) => `127.0.0.1:${p}`).join(",")}${u.pathname}?target_session_attrs=${attrs}`;
}

async function setReadOnly(on: boolean): Promise<void> {
  const admin = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE ${admin.escapeIdentifier(db.name)} SET default_transaction_read_only = ${on ? "on" : "off"}`);
    // Sessions read the database's settings when they start: end the open ones (a demotion restarts the server).
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [db.name]);
  } finally {
    await admin.end();
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  pgPort = Number(new URL(db.url).port);
});

afterAll(async () => {
  for (const s of servers) await s.close();
  for (const p of pools) await p.end().catch(() => {});
  await setReadOnly(false).catch(() => {});
  await db?.drop();
});

describe("a multi-host DATABASE_URL", () => {
  it("goes to the first host that answers as read-write and follows the next one when it dies, without a new pool", async () => {
    const a = await forwarder(pgPort);
    const b = await forwarder(pgPort);
    const dead = await freePort(); // nothing listens here
    const url = clusterUrl([dead, a.port, b.port], "read-write");
    const pool = createPool(url, { max: 3, connectionTimeoutMillis: 3000 });
    pools.push(pool);
    await pool.query("CREATE TABLE IF NOT EXISTS cluster_probe (n int)");
    expect(resolverFor(url)?.remembered).toEqual({ host: "127.0.0.1", port: a.port });

    await a.cut();
    // The pool's connections through `a` end; new ones go to `b` (bounded wait, no sleep).
    await expect
      .poll(
        async () =>
          pool.query("INSERT INTO cluster_probe VALUES (1) RETURNING n").then(
            (r) => r.rows[0]?.n,
            (e: unknown) => (isDbUnavailable(e) ? "unavailable" : e),
          ),
        { timeout: 10_000, interval: 50 },
      )
      .toBe(1);
    expect(resolverFor(url)?.remembered).toEqual({ host: "127.0.0.1", port: b.port });
    await b.cut();
  });

  it("refuses writes as unavailable (08001) while no host is read-write, and recovers by itself", async () => {
    const url = clusterUrl([pgPort], "read-write");
    const pool = createPool(url, { max: 3, connectionTimeoutMillis: 3000 });
    pools.push(pool);
    await pool.query("CREATE TABLE IF NOT EXISTS cluster_demote (n int)");
    await setReadOnly(true);
    try {
      // An idle connection the "demotion" ended may fail first (57P01); every failure is
      // "unavailable", and the pool settles on 08001: no host is read-write (bounded wait).
      const errors: unknown[] = [];
      await expect
        .poll(
          async () => {
            const err: unknown = await pool.query("INSERT INTO cluster_demote VALUES (1)").then(
              () => null,
              (e: unknown) => e,
            );
            errors.push(err);
            return (err as { code?: string } | null)?.code;
          },
          { timeout: 10_000, interval: 20 },
        )
        .toBe("08001");
      expect(
        errors.every((e) => isDbUnavailable(e)),
        String(errors),
      ).toBe(true);
      // A read-only server is what a prefer-standby URL takes.
      const reader = createPool(clusterUrl([pgPort], "prefer-standby"), { max: 1 });
      pools.push(reader);
      expect((await reader.query<{ n: string }>("SELECT count(*) AS n FROM cluster_demote")).rows[0]?.n).toBe("0");
    } finally {
      await setReadOnly(false);
    }
    await expect
      .poll(
        async () =>
          pool.query("INSERT INTO cluster_demote VALUES (2) RETURNING n").then(
            (r) => r.rows[0]?.n,
            () => "unavailable",
          ),
        { timeout: 10_000, interval: 50 },
      )
      .toBe(2);
  });

  it("sets WRIT_SYNCHRONOUS_COMMIT on every session of the pool (the spend transaction's among them)", async () => {
    const pool = createPool(clusterUrl([pgPort], "read-write"), { max: 2, synchronousCommit: "remote_apply" });
    pools.push(pool);
    const clients = await Promise.all([pool.connect(), pool.connect()]);
    for (const c of clients)
      expect((await c.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).rows[0]?.synchronous_commit).toBe("remote_apply");
    for (const c of clients) c.release();
    const plain = createPool(db.url, { max: 1, synchronousCommit: "local" });
    pools.push(plain);
    expect((await plain.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).rows[0]?.synchronous_commit).toBe("local");
  });

  it("answers 503 {error} on routes that write while no primary is reachable, and serves the read routes from DATABASE_READ_URL", async () => {
    const dead = [await freePort(), await freePort()];
    const server = await startTestServer({
      DATABASE_URL: clusterUrl(dead, "read-write"),
      DATABASE_READ_URL: clusterUrl([...dead, pgPort], "prefer-standby"),
      BUR_ADMIN_TOKEN: "admin-cluster-test-token-0123456789",
    });
    servers.push(server);
    const write = await fetch(`${server.url}/v1/orgs`, {
      method: "POST",
      headers: { authorization: "Bearer admin-cluster-test-token-0123456789", "content-type": "application/json" },
      body: JSON.stringify({ name: "x", org_type: "agent_operator" }),
    });
    expect(write.status).toBe(503);
    expect(Object.keys((await write.json()) as object)).toEqual(["error"]);
    const revocations = await fetch(`${server.url}/v1/revocations`);
    expect(revocations.status).toBe(200);
    expect(await revocations.json()).toEqual({ revocations: [] });
    const head = await fetch(`${server.url}/v1/log/head`);
    expect(head.status).toBe(404); // answered from the database: the log is empty
  });
});
