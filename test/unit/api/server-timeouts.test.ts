/**
 * Slow clients cannot hold the data plane's connections: a request whose headers never end,
 * a body that never ends and an idle keep-alive connection are each closed by the server
 * within its limit (raw sockets to 127.0.0.1; the bounds are asserted, nothing sleeps).
 */
import net from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../../src/api/app.js";
import { loadServerTimeouts } from "../../../src/api/server-timeouts.js";
import { loadSettings } from "../../../src/api/settings.js";

let app: FastifyInstance;
let port = 0;

beforeAll(async () => {
  app = buildApp(
    loadSettings({ LOG_LEVEL: "silent", WRIT_HTTP_HEADERS_TIMEOUT_MS: "300", WRIT_HTTP_REQUEST_TIMEOUT_MS: "600", WRIT_HTTP_KEEP_ALIVE_TIMEOUT_MS: "200" }),
    { pool: null },
  );
  await app.listen({ host: "127.0.0.1", port: 0 });
  port = (app.server.address() as net.AddressInfo).port;
});
afterAll(() => app.close());

/** Opens a socket, writes `data`, and resolves with what came back and when the server closed it (ms after writing). */
function sendAndWaitForClose(data: string): Promise<{ ms: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: "127.0.0.1", port });
    let answer = "";
    let t0 = 0;
    s.on("connect", () => {
      t0 = performance.now();
      s.write(data);
    });
    s.on("data", (b: Buffer) => (answer += b.toString("latin1")));
    s.on("error", () => {});
    s.on("close", () => resolve({ ms: performance.now() - t0, answer }));
    setTimeout(() => {
      s.destroy();
      reject(new Error("the server kept the connection open for 5 s"));
    }, 5000).unref();
  });
}

describe("server timeouts", () => {
  it("closes a connection whose request headers never end within WRIT_HTTP_HEADERS_TIMEOUT_MS (+ check interval)", async () => {
    const { ms, answer } = await sendAndWaitForClose("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    expect(ms).toBeLessThan(300 + 150 + 500);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("closes a connection whose request body never ends within WRIT_HTTP_REQUEST_TIMEOUT_MS (+ check interval)", async () => {
    const { ms } = await sendAndWaitForClose(
      'POST /v1/log/entries HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"kind":',
    );
    expect(ms).toBeLessThan(600 + 150 + 500);
  });

  it("closes an idle keep-alive connection after WRIT_HTTP_KEEP_ALIVE_TIMEOUT_MS (node adds 1 s of slack)", async () => {
    const { ms, answer } = await sendAndWaitForClose("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(ms).toBeLessThan(200 + 1000 + 500);
  });
});

describe("WRIT_HTTP_*_TIMEOUT_MS settings", () => {
  it("defaults", () => {
    const problems: string[] = [];
    expect(loadServerTimeouts({}, problems)).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5000,
      connectionTimeoutMs: 60_000,
      checkIntervalMs: 5000,
    });
    expect(problems).toEqual([]);
  });

  it("keeps the headers limit within the request limit and reports unusable values", () => {
    const problems: string[] = [];
    const t = loadServerTimeouts(
      {
        WRIT_HTTP_HEADERS_TIMEOUT_MS: "9000",
        WRIT_HTTP_REQUEST_TIMEOUT_MS: "2000",
        WRIT_HTTP_KEEP_ALIVE_TIMEOUT_MS: "0",
        WRIT_HTTP_CONNECTION_TIMEOUT_MS: "x",
      },
      problems,
    );
    expect(t).toEqual({ headersTimeoutMs: 2000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 5000, connectionTimeoutMs: 60_000, checkIntervalMs: 1000 });
    expect(problems).toHaveLength(3);
  });
});
