/**
 * A small HTTP server (node:http) for health and metrics, apart from any public API: `GET
 * /healthz` (200 while the process runs), `GET /readyz` (when a readiness probe is given: 200
 * when it says ready, else 503 with its detail) and `GET /metrics` (a prom-client registry).
 * Anything else is 404. The controller serves its health and metrics on it (HOST:PORT); the
 * data plane its metrics when METRICS_PORT is set, so they are not on its public port.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** Readiness: ok, or what is not ready yet. */
export type Readiness = { ok: true } | { ok: false; detail: string };

/** A running health server. */
export interface HealthServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the server; resolves once it listens. */
export function startHealthServer(opts: { host: string; port: number; registry: Registry; ready?: () => Readiness }): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const send = (status: number, body: string, type = "text/plain; charset=utf-8") => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, "method not allowed\n");
    if (path === "/healthz") return send(200, "ok\n");
    if (path === "/readyz" && opts.ready) {
      const r = opts.ready();
      return r.ok ? send(200, "ok\n") : send(503, `not ready: ${r.detail}\n`);
    }
    if (path === "/metrics") {
      opts.registry.metrics().then(
        (body) => send(200, body, opts.registry.contentType),
        (e: unknown) => send(500, `metrics failed: ${e instanceof Error ? e.message : String(e)}\n`),
      );
      return;
    }
    send(404, "not found\n");
  });
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      const port = (server.address() as AddressInfo).port;
      const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
      resolve({
        url: `http://${host}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
