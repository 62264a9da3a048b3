import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startServeProcess } from "../helpers/serve-process.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await db?.drop();
});

describe("writ serve (child process)", () => {
  it("starts without DATABASE_URL, answers 503 where the spec says, and exits 0 on SIGTERM", async () => {
    const p = await startServeProcess();
    try {
      const r = await fetch(`${p.url}/v1/revocations`);
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ error: "DATABASE_URL is not set" });
    } finally {
      const exit = await p.stop("SIGTERM");
      expect(exit).toEqual({ code: 0, signal: null });
    }
    expect(p.output()).toContain("shutting down");
  });

  it("migrates at start-up, serves from the database, and exits 0 on SIGINT", async () => {
    const [a, b] = await Promise.all([startServeProcess({ env: { DATABASE_URL: db.url } }), startServeProcess({ env: { DATABASE_URL: db.url } })]);
    try {
      for (const p of [a, b]) {
        await expect.poll(async () => (await fetch(`${p.url}/readyz`)).status, { timeout: 20_000, interval: 100 }).toBe(200);
        const r = await fetch(`${p.url}/v1/revocations`);
        expect(r.status).toBe(200);
        expect(await r.json()).toEqual({ revocations: [] });
      }
      const { rows } = await db.pool.query("SELECT name FROM pgmigrations");
      expect(rows.map((r) => r.name)).toContain("0010_revocations");
    } finally {
      expect(await a.stop("SIGINT")).toEqual({ code: 0, signal: null });
      expect(await b.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    }
  });

  it("keeps serving with a keep-alive client connected and still exits promptly", async () => {
    const p = await startServeProcess();
    const agentFetch = await fetch(`${p.url}/healthz`, { keepalive: true });
    expect(agentFetch.status).toBe(200);
    const t0 = Date.now();
    expect(await p.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it("serves /healthz while the database is unreachable, answers 503 for storage, and still exits 0", async () => {
    const p = await startServeProcess({ env: { DATABASE_URL: "postgres://x:y@127.0.0.1:1/none" } });
    try {
      expect((await fetch(`${p.url}/readyz`)).status).toBe(503);
      const r = await fetch(`${p.url}/v1/revocations`);
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ error: "database unavailable" });
    } finally {
      expect(await p.stop("SIGTERM", 5000)).toEqual({ code: 0, signal: null });
    }
    expect(p.output()).toContain("migrations will be retried");
  });
});
