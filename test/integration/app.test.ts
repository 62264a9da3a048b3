import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { startServer } from "../../src/api/server.js";
import { loadSettings } from "../../src/api/settings.js";

let db: TestDatabase;
let server: TestServer;
let bare: TestServer;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ DATABASE_URL: db.url }, { pool: db.pool });
  bare = await startTestServer({});
});

afterAll(async () => {
  await server?.close();
  await bare?.close();
  await db?.drop();
});

async function json(url: string, init?: RequestInit) {
  const r = await fetch(url, init);
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, body: JSON.parse(text) as Record<string, unknown> };
}

function expectPlainError(r: { text: string; body: Record<string, unknown> }) {
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect(typeof r.body.error).toBe("string");
  expect(r.text).not.toMatch(/stack|at .*\.(ts|js):\d+|node_modules/);
}

describe("health", () => {
  it("/healthz is 200 {status: ok} with and without a database", async () => {
    for (const s of [server, bare]) {
      const r = await json(`${s.url}/healthz`);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: "ok" });
    }
  });

  it("/readyz is 200 when the database answers or is not configured", async () => {
    expect((await json(`${server.url}/readyz`)).body).toEqual({ status: "ok", database: "ok" });
    expect((await json(`${bare.url}/readyz`)).body).toEqual({ status: "ok", database: "not configured" });
  });

  it("/readyz is 503 {error} until the revocation index can vouch for its state (a Kubernetes watch that never syncs)", async () => {
    // A kubeconfig whose API server does not exist: the watch never lists, the index stays stale.
    const dir = await mkdtemp(join(tmpdir(), "writ-readyz-"));
    const kubeconfig = join(dir, "config");
    await writeFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        "current-context": "c",
        clusters: [{ name: "k", cluster: { server: "https://127.0.0.1:1", "insecure-skip-tls-verify": true } }],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
      }),
    );
    const unwatched = await startTestServer({ DATABASE_URL: db.url, KUBECONFIG: kubeconfig }, { pool: db.pool });
    try {
      expect(unwatched.app.verifyRuntime?.kubeWatch).not.toBeNull();
      const r = await json(`${unwatched.url}/readyz`);
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ error: "revocation index not loaded yet" });
      expect((await json(`${unwatched.url}/healthz`)).status).toBe(200);
      // The same database without the watch: the index loads, the process is ready.
      expect((await json(`${server.url}/readyz`)).status).toBe(200);
      expect(server.app.verifyRuntime?.everFresh()).toBe(true);
    } finally {
      await unwatched.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("/readyz is 503 {error} when the configured database is unreachable", async () => {
    const down = await startTestServer({ DATABASE_URL: "postgres://nobody:pw@127.0.0.1:1/none" });
    try {
      const r = await json(`${down.url}/readyz`);
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ error: "database unavailable" });
      const list = await json(`${down.url}/v1/revocations`);
      expect(list.status).toBe(503);
      expect(list.body).toEqual({ error: "database unavailable" });
    } finally {
      await down.close();
    }
  });

  it("/readyz is 503 until the schema is marked ready and the revocation index has loaded", async () => {
    const s = await startTestServer({ DATABASE_URL: db.url }, { pool: db.pool, schemaReady: false });
    try {
      expect((await json(`${s.url}/readyz`)).status).toBe(503);
      expect((await json(`${s.url}/v1/revocations`)).body).toEqual({ error: "database unavailable" });
      s.app.markSchemaReady();
      // The index loads in the background (it retries while the schema is not there).
      const seen = new Set<string>();
      let r = await json(`${s.url}/readyz`);
      for (let i = 0; r.status !== 200 && i < 300; i++) {
        seen.add(String(r.body.error));
        await new Promise((done) => setTimeout(done, 50));
        r = await json(`${s.url}/readyz`);
      }
      expect(r.status).toBe(200);
      for (const e of seen) expect(["database unavailable", "revocation index not loaded yet"]).toContain(e);
      expect(s.app.verifyRuntime?.everFresh()).toBe(true);
    } finally {
      await s.close();
    }
  });
});

describe("request ids", () => {
  it("generates one per request and echoes it", async () => {
    const a = await fetch(`${bare.url}/healthz`);
    const b = await fetch(`${bare.url}/healthz`);
    expect(a.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers.get("x-request-id")).not.toBe(b.headers.get("x-request-id"));
  });

  it("honours a plain incoming x-request-id and replaces a hostile one", async () => {
    const ok = await fetch(`${bare.url}/healthz`, { headers: { "x-request-id": "trace-123.abc" } });
    expect(ok.headers.get("x-request-id")).toBe("trace-123.abc");
    const bad = await fetch(`${bare.url}/nowhere`, { headers: { "x-request-id": "a b<script>" } });
    expect(bad.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("error shapes", () => {
  it("400 for NUL characters in path or query values, on every route (fuzzer's counterexample)", async () => {
    const s = await startTestServer({ DATABASE_URL: db.url, BUR_ADMIN_TOKEN: "admin-token-for-nul-test" }, { pool: db.pool });
    try {
      const auth = { authorization: "Bearer admin-token-for-nul-test" };
      const path = await json(`${s.url}/v1/orgs/%00/keys/x`, { method: "DELETE", headers: auth });
      expect(path.status).toBe(400);
      expect(path.body).toEqual({ error: "params/org_id must not contain NUL characters" });
      const query = await json(`${s.url}/v1/revocations?limit=5&extra=%00`);
      expect(query.status).toBeLessThan(500);
    } finally {
      await s.close();
    }
  });

  it("404 {error: route not found} for an unknown route", async () => {
    const r = await json(`${bare.url}/v1/nothing-here`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: "route not found" });
  });

  it("400 for malformed JSON, with no stack trace", async () => {
    const r = await json(`${server.url}/v1/revocations/push`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    // No notifier configured: settings are checked before the body is read.
    expect(r.status).toBe(503);
    const s = await startTestServer(
      {
        SVC_PUSH_NOTIFIER_JWK: JSON.stringify({ kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" }),
        SVC_LOG_SIGNING_SEED: "a".repeat(64),
      },
      { pool: db.pool },
    );
    try {
      const bad = await json(`${s.url}/v1/revocations/push`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{not json",
      });
      expect(bad.status).toBe(400);
      expectPlainError(bad);
      const proto = await json(`${s.url}/v1/revocations/push`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"__proto__": {"x": 1}}',
      });
      expect(proto.status).toBe(400);
      expectPlainError(proto);
      const empty = await json(`${s.url}/v1/revocations/push`, { method: "POST", headers: { "content-type": "application/json" }, body: "" });
      expect(empty.status).toBe(400);
      expectPlainError(empty);
      const form = await json(`${s.url}/v1/revocations/push`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "a=b",
      });
      expect(form.status).toBe(415);
      expectPlainError(form);
      const big = await json(`${s.url}/v1/revocations/push`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ pad: "x".repeat(1024 * 1024 + 10) }),
      });
      expect(big.status).toBe(413);
      expectPlainError(big);
    } finally {
      await s.close();
    }
  });

  it("400 names the field on a querystring validation failure", async () => {
    const r = await json(`${server.url}/v1/revocations?after=abc`);
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("after");
    expectPlainError(r);
  });
});

describe("metrics", () => {
  it("serves prometheus text with default metrics and the request histogram by route pattern", async () => {
    await fetch(`${server.url}/v1/revocations?after=0`);
    await fetch(`${server.url}/no/such/route/123`);
    const r = await fetch(`${server.url}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/plain");
    const text = await r.text();
    expect(text).toContain("process_cpu_user_seconds_total");
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/v1\/revocations",status="200"\} \d+/);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="<unmatched>",status="404"\} \d+/);
    expect(text).not.toContain("/no/such/route/123");
    expect(text).not.toContain("after=0");
  });

  it("serves them on METRICS_PORT, not on the public port, when it is set", async () => {
    const s = await startServer(loadSettings({ LOG_LEVEL: "silent", PORT: "0", METRICS_PORT: "0" }), { migrate: false });
    try {
      expect((await fetch(`${s.url}/metrics`)).status).toBe(404);
      expect(s.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(s.metricsUrl).not.toBe(s.url);
      const text = await (await fetch(`${s.metricsUrl ?? ""}/metrics`)).text();
      expect(text).toContain("process_cpu_user_seconds_total");
      expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="<unmatched>",status="404"\} 1/);
    } finally {
      await s.close();
    }
  });
});

describe("openapi", () => {
  it("publishes /openapi.json with the route schemas", async () => {
    const r = await json(`${bare.url}/openapi.json`);
    expect(r.status).toBe(200);
    expect(String(r.body.openapi)).toMatch(/^3\./);
    const paths = r.body.paths as Record<string, Record<string, unknown>>;
    expect(paths["/v1/revocations"]?.get).toBeDefined();
    expect(paths["/v1/revocations/push"]?.post).toBeDefined();
    expect(paths["/.well-known/svc-keys.json"]?.get).toBeDefined();
    expect(paths["/metrics"]).toBeUndefined();
  });

  it("serves interactive documentation at /docs/openapi", async () => {
    const r = await fetch(`${bare.url}/docs/openapi`, { redirect: "follow" });
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("swagger");
  });
});

describe("graceful close", () => {
  it("lets an in-flight request finish, then stops accepting", async () => {
    const { buildApp } = await import("../../src/api/app.js");
    const { loadSettings } = await import("../../src/api/settings.js");
    const app = buildApp(loadSettings({ LOG_LEVEL: "silent" }));
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let entered: () => void = () => {};
    const inside = new Promise<void>((r) => (entered = r));
    app.get("/slow", async () => {
      entered();
      await gate;
      return { done: true };
    });
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    const pending = fetch(`${url}/slow`);
    await inside;
    const closing = app.close();
    await new Promise((r) => setTimeout(r, 50));
    const late = await fetch(`${url}/healthz`).then(
      (r) => r.status,
      () => "refused",
    );
    expect([503, "refused"]).toContain(late);
    release();
    const r = await pending;
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ done: true });
    await closing;
  });
});
