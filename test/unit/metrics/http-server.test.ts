import { afterEach, describe, expect, it } from "vitest";
import { startHealthServer, type HealthServer } from "../../../src/metrics/http-server.js";
import { createControllerMetrics } from "../../../src/controller/metrics.js";

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the health and metrics server", () => {
  it("answers /healthz, /readyz by the readiness probe, /metrics under controller-runtime's names", async () => {
    let ready = false;
    const metrics = createControllerMetrics({ defaults: false });
    metrics.initController("delegation");
    metrics.queue("delegation");
    metrics.leading("writ-controller", true);
    metrics.reconciled("delegation", "success", 0.02);
    server = await startHealthServer({
      host: "127.0.0.1",
      port: 0,
      registry: metrics.registry,
      ready: () => (ready ? { ok: true } : { ok: false, detail: "1 informer cache(s) not synced" }),
    });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const notReady = await fetch(`${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.text()).toContain("not synced");
    ready = true;
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    for (const name of [
      'controller_runtime_reconcile_total{controller="delegation",result="success"} 1',
      'controller_runtime_reconcile_errors_total{controller="delegation"} 0',
      'controller_runtime_reconcile_time_seconds_bucket{le="0.025",controller="delegation"} 1',
      'workqueue_depth{name="delegation"} 0',
      'workqueue_adds_total{name="delegation"} 0',
      'workqueue_retries_total{name="delegation"} 0',
      "# TYPE workqueue_queue_duration_seconds histogram",
      "# TYPE workqueue_work_duration_seconds histogram",
      'leader_election_master_status{name="writ-controller"} 1',
    ])
      expect(text).toContain(name);
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
  });

  it("serves only /healthz and /metrics without a readiness probe", async () => {
    const metrics = createControllerMetrics({ defaults: false });
    server = await startHealthServer({ host: "127.0.0.1", port: 0, registry: metrics.registry });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(200);
  });
});
