/**
 * The chart's optional CloudNativePG Cluster (postgresCluster.enabled) with a real helm and a
 * real kube-apiserver (envtest): the Cluster renders with synchronous replicas, its `-app`
 * Secret is wired into both components (DATABASE_URL) and the data plane also reads through the
 * `-r` Service with WRIT_SYNCHRONOUS_COMMIT; values that cannot work are refused; the rendered
 * manifests apply with server-side dry-run, the Cluster against a stand-in of CloudNativePG's
 * CRD (test/fixtures/cloudnative-pg-cluster-crd.yaml) whose schema prunes any field it does not
 * declare, so the object the API server returns must equal the rendered one.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { ensureEnvtest, startEnvtest, type CommandResult, type Envtest } from "../helpers/envtest.js";

const CHART = fileURLToPath(new URL("../../charts/writ", import.meta.url));
const CNPG_CRD = fileURLToPath(new URL("../fixtures/cloudnative-pg-cluster-crd.yaml", import.meta.url));
const NS = "writ-db";

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Deployment extends K8sObject {
  spec: { template: { spec: { containers: Array<{ env: EnvVar[] }> } } };
}

function ok(r: CommandResult): string {
  expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
  return r.stdout;
}

const objects = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);

describe("the chart's CloudNativePG Cluster", () => {
  let env: Envtest;
  const helm = (args: string[]) => env.helm(args, { timeoutMs: 120_000 });
  // `--set a=b`, or `--set-string a=b` for an item written `string:a=b`.
  const flags = (set: string[]) => set.flatMap((s) => (s.startsWith("string:") ? ["--set-string", s.slice(7)] : ["--set", s]));
  const render = async (...set: string[]) =>
    ok(await helm(["template", "writ", CHART, "-n", NS, "--kube-version", "1.20.2", "--set", "postgresCluster.enabled=true", ...flags(set)]));

  beforeAll(async () => {
    env = await startEnvtest({ binDir: await ensureEnvtest() });
    ok(await env.kubectl(["create", "namespace", NS]));
  }, 30 * 60_000);

  afterAll(async () => {
    await env?.stop();
  }, 60_000);

  it("is not rendered by default", async () => {
    // Without the Cluster the chart needs a database URL of its own (it refuses an install without one).
    const text = ok(await helm(["template", "writ", CHART, "-n", NS, "--set", "secret.databaseUrl=postgres://writ:writ@db:5432/writ"]));
    expect(objects(text).filter((o) => o.kind === "Cluster")).toEqual([]);
    expect(text).not.toMatch(/CNPG_APP_USER|DATABASE_READ_URL/);
  });

  it("renders a Cluster with synchronous replicas and wires its app Secret into both components", async () => {
    const objs = objects(await render("string:postgresCluster.parameters.max_connections=300", "postgresCluster.storage.storageClass=fast"));
    const cluster = objs.find((o) => o.kind === "Cluster");
    expect(cluster?.apiVersion).toBe("postgresql.cnpg.io/v1");
    expect(cluster?.metadata).toMatchObject({ name: "writ-pg", namespace: NS });
    expect(cluster?.spec).toMatchObject({
      instances: 3,
      postgresql: { synchronous: { method: "any", number: 1, dataDurability: "required" }, parameters: { max_connections: "300" } },
      bootstrap: { initdb: { database: "writ", owner: "writ" } },
      storage: { size: "10Gi", storageClass: "fast" },
    });
    for (const name of ["writ-data-plane", "writ-controller"]) {
      const d = objs.find((o) => o.kind === "Deployment" && o.metadata.name === name) as Deployment;
      const envs = d.spec.template.spec.containers[0]?.env ?? [];
      const byName = new Map(envs.map((e) => [e.name, e]));
      expect(byName.get("DATABASE_URL")?.valueFrom?.secretKeyRef).toEqual({ name: "writ-pg-app", key: "uri" });
      // $(VAR) references resolve only to variables listed before them.
      const names = envs.map((e) => e.name);
      expect(names.indexOf("CNPG_APP_PASSWORD")).toBeLessThan(names.indexOf("DATABASE_READ_URL"));
      expect(byName.get("DATABASE_READ_URL")?.value).toBe(`postgresql://$(CNPG_APP_USER):$(CNPG_APP_PASSWORD)@writ-pg-r.${NS}:5432/writ`);
      expect(byName.get("WRIT_SYNCHRONOUS_COMMIT")?.value).toBe("remote_apply");
    }
  });

  it.each([
    ["a database URL beside the Cluster", ["secret.databaseUrl=postgres://x@y/z"], /leave secret.databaseUrl empty/],
    ["no more instances than synchronous standbys", ["postgresCluster.instances=2", "postgresCluster.synchronous.number=2"], /instances must be above/],
    ["an unknown synchronous method", ["postgresCluster.synchronous.method=quorum"], /method/],
    ["an unknown synchronous_commit level", ["postgresCluster.synchronousCommit=sometimes"], /synchronousCommit/],
    ["a single instance", ["postgresCluster.instances=1"], /instances/],
  ])("refuses %s", async (_what, set, message) => {
    const r = await helm(["template", "writ", CHART, "--set", "postgresCluster.enabled=true", ...set.flatMap((s) => ["--set", s])]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it("applies with server-side dry-run against CloudNativePG's Cluster schema, every field kept", async () => {
    ok(await env.kubectl(["apply", "-f", CNPG_CRD]));
    ok(await env.kubectl(["wait", "--for=condition=Established", "--timeout=30s", "crd/clusters.postgresql.cnpg.io"]));
    for (const set of [
      [],
      [
        "postgresCluster.instances=5",
        "postgresCluster.synchronous.method=first",
        "postgresCluster.synchronous.number=2",
        "postgresCluster.synchronous.dataDurability=preferred",
        "postgresCluster.imageName=registry.example.com/postgresql:17",
        "postgresCluster.resources.requests.cpu=1",
        "postgresCluster.synchronousCommit=",
      ],
    ]) {
      const rendered = await render(...set);
      const out = ok(await env.kubectl(["apply", "--dry-run=server", "-f", "-"], { input: rendered }));
      const lines = out.trim().split("\n");
      expect(lines.length).toBe(objects(rendered).length);
      for (const line of lines) expect(line).toMatch(/ (created|configured|unchanged) \(server dry run\)$/);
      const cluster = objects(rendered).find((o) => o.kind === "Cluster") as K8sObject;
      const returned = JSON.parse(
        ok(await env.kubectl(["create", "--dry-run=server", "-o", "json", "-f", "-"], { input: JSON.stringify(cluster) })),
      ) as K8sObject;
      expect(returned.spec).toEqual(cluster.spec);
    }
    // A value outside the schema is refused by the API server itself.
    const bad = {
      apiVersion: "postgresql.cnpg.io/v1",
      kind: "Cluster",
      metadata: { name: "bad", namespace: NS },
      spec: { instances: 2, postgresql: { synchronous: { method: "all", number: 0 } } },
    };
    const r = await env.kubectl(["create", "--dry-run=server", "-f", "-"], { input: JSON.stringify(bad) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/synchronous\.method|synchronous\.number/);
  });
});
