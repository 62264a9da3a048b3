/**
 * The metrics plugin: one prom-client Registry per app, decorated as `metrics`, with the
 * default process metrics and `http_request_duration_seconds{method, route, status}` where
 * `route` is the matched route pattern (`/v1/log/entries/:sequence`), never the raw URL, and
 * `<unmatched>` for requests no route matched. Serves the registry at `GET /metrics` unless
 * `route: false` (METRICS_PORT set: the metrics are served on their own port by src/api/server.ts,
 * not on the public one).
 *
 * Other areas register their own metrics on `app.metrics.registry` at start-up.
 */
import fp from "fastify-plugin";
import { Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** The metrics decorated on the app. */
export interface AppMetrics {
  readonly registry: Registry;
  readonly httpDuration: Histogram<"method" | "route" | "status">;
}

declare module "fastify" {
  interface FastifyInstance {
    readonly metrics: AppMetrics;
  }
}

/** Options of the metrics plugin. */
export interface MetricsPluginOptions {
  /** A registry to use (default: a new one with the default process metrics). */
  registry?: Registry;
  /** Serve `GET /metrics` on this app (default true). */
  route?: boolean;
}

export default fp<MetricsPluginOptions>(
  async (app, opts) => {
    let registry = opts.registry;
    if (!registry) {
      registry = new Registry();
      collectDefaultMetrics({ register: registry });
    }
    const httpDuration = new Histogram({
      name: "http_request_duration_seconds",
      help: "Duration of HTTP requests by method, route pattern and status code.",
      labelNames: ["method", "route", "status"] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    app.decorate("metrics", { registry, httpDuration });
    app.addHook("onResponse", (request, reply, done) => {
      httpDuration.observe(
        { method: request.method, route: request.routeOptions.url ?? "<unmatched>", status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
      done();
    });
    const reg = registry;
    if (opts.route === false) return;
    app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
      const body = await reg.metrics();
      return reply.type(reg.contentType).send(body);
    });
  },
  { name: "writ-metrics" },
);
