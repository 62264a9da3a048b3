/**
 * The Grafana dashboard (charts/writ/dashboards/writ.json) asks only for metrics Writ exports:
 * every metric name its queries name is on /metrics of a running data plane (with a database and
 * a Kubernetes watch and a log signing key configured, so that every metric is registered) or in the controller's
 * registry (src/controller/metrics.ts). A histogram's `_bucket`, `_sum` and `_count` series
 * count as its name.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControllerMetrics } from "../../src/controller/metrics.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const DASHBOARD = fileURLToPath(new URL("../../charts/writ/dashboards/writ.json", import.meta.url));

/** PromQL words that are not metric names. */
const KEYWORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset"]);

/** The metric names a PromQL expression reads. */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\{[^}]*\}/g, "") // label matchers
    .replace(/\[[^\]]*\]/g, "") // ranges
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ""); // grouping labels
  const names = new Set<string>();
  for (const m of stripped.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/g)) {
    const [, name, call] = m;
    if (name === undefined || call !== undefined || KEYWORDS.has(name)) continue;
    names.add(name);
  }
  return [...names].sort();
}

/** `{name: type}` of a Prometheus text exposition. */
function exported(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1] as string, m[2] as string);
  return out;
}

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

let db: TestDatabase;
let server: TestServer;
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), "writ-dashboard-"));
  // A kubeconfig whose cluster never answers: the watch registers its metrics (and stays down).
  const kubeconfig = join(dir, "kubeconfig");
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "c",
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:9", "insecure-skip-tls-verify": true } }],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
    }),
  );
  // With a log signing key the webhook worker runs (and registers its counter).
  server = await startTestServer({ DATABASE_URL: db.url, KUBECONFIG: kubeconfig, WRIT_KUBE_WATCH: "auto", SVC_LOG_SIGNING_SEED: "11".repeat(32) });
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the Grafana dashboard", () => {
  it("reads PromQL metric names as expected", () => {
    expect(
      metricNames('histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{namespace=~"$namespace"}[$__rate_interval])))'),
    ).toEqual(["http_request_duration_seconds_bucket"]);
    expect(metricNames('sum(rate(a_total{x="y"}[5m])) / sum(rate(b_total[5m])) > 0.5')).toEqual(["a_total", "b_total"]);
  });

  it("names only metrics that the data plane and the controller export", async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Panel[] };
    const exprs = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]).flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ""));
    expect(exprs.length).toBeGreaterThan(20);
    const named = new Set(exprs.flatMap(metricNames));

    const app = exported(await (await fetch(`${server.url}/metrics`)).text());
    const controller = exported(await createControllerMetrics().registry.metrics());
    const types = new Map([...app, ...controller]);
    const missing = [...named].filter((name) => {
      if (types.has(name)) return false;
      const base = name.replace(/_(bucket|sum|count)$/, "");
      return !(base !== name && (types.get(base) === "histogram" || types.get(base) === "summary"));
    });
    expect(missing).toEqual([]);
    // The panels cover what operators look at first.
    for (const name of [
      "writ_verdicts_total",
      "writ_revocation_index_stale",
      "writ_kube_watch_up",
      "controller_runtime_reconcile_errors_total",
      "workqueue_depth",
    ]) {
      expect(named.has(name), name).toBe(true);
    }
  });
});
