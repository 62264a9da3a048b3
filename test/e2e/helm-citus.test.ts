/**
 * The chart's Citus option (citus.enabled, citus.shardedCluster.enabled) with a real helm and a
 * real kube-apiserver (envtest): WRIT_CITUS reaches both components, DATABASE_URL stays the
 * chart Secret's (the coordinator's primary, given by the operator of the install); the optional
 * StackGres SGShardedCluster of type citus renders with a coordinator and worker groups that each
 * have a standby; values that cannot work are refused; the rendered manifests apply with
 * server-side dry-run, the SGShardedCluster against a stand-in of StackGres's CRD
 * (test/fixtures/stackgres-sharded-cluster-crd.yaml) whose schema prunes any field it does not
 * declare, so the object the API server returns must equal the rendered one.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { ensureEnvtest, startEnvtest, type CommandResult, type Envtest } from "../helpers/envtest.js";

const CHART = fileURLToPath(new URL("../../charts/writ", import.meta.url));
const SG_CRD = fileURLToPath(new URL("../fixtures/stackgres-sharded-cluster-crd.yaml", import.meta.url));
const NS = "writ-citus";
const URL_TO_COORDINATOR = "postgres://writ:secret@writ-citus.writ-citus:5432/writ";

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}
interface EnvVar {
  name: string;
  value?: string;
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

describe("the chart's Citus option", () => {
  let env: Envtest;
  const helm = (args: string[]) => env.helm(args, { timeoutMs: 120_000 });
  // `--set a=b`, or `--set-string a=b` for an item written `string:a=b`.
  const flags = (set: string[]) => set.flatMap((s) => (s.startsWith("string:") ? ["--set-string", s.slice(7)] : ["--set", s]));
  const template = (set: string[], url: string | null = URL_TO_COORDINATOR) =>
    helm(["template", "writ", CHART, "-n", NS, "--kube-version", "1.20.2", ...(url ? ["--set", `secret.databaseUrl=${url}`] : []), ...flags(set)]);
  const render = async (...set: string[]) => ok(await template(["citus.enabled=true", ...set]));

  beforeAll(async () => {
    env = await startEnvtest({ binDir: await ensureEnvtest() });
    ok(await env.kubectl(["create", "namespace", NS]));
  }, 30 * 60_000);

  afterAll(async () => {
    await env?.stop();
  }, 60_000);

  it("is off by default: no WRIT_CITUS, no SGShardedCluster", async () => {
    const text = ok(await template([]));
    expect(objects(text).filter((o) => o.kind === "SGShardedCluster")).toEqual([]);
    expect(text).not.toMatch(/WRIT_CITUS/);
  });

  it("sets WRIT_CITUS on both components and leaves DATABASE_URL to the chart Secret (the coordinator)", async () => {
    for (const mode of ["auto", "off"]) {
      const objs = objects(await render(`citus.mode=${mode}`));
      expect(objs.filter((o) => o.kind === "SGShardedCluster")).toEqual([]);
      for (const name of ["writ-data-plane", "writ-controller"]) {
        const d = objs.find((o) => o.kind === "Deployment" && o.metadata.name === name) as Deployment;
        const envs = d.spec.template.spec.containers[0]?.env ?? [];
        expect(envs.find((e) => e.name === "WRIT_CITUS")?.value).toBe(mode);
        expect(envs.find((e) => e.name === "WRIT_CITUS_DIRECT")?.value).toBe("on");
        expect(envs.find((e) => e.name === "WRIT_CITUS_DECISION_PARTITIONS")?.value).toBe("off");
        expect(envs.find((e) => e.name === "DATABASE_URL")).toBeUndefined();
      }
      const secret = objs.find((o) => o.kind === "Secret") as K8sObject & { data?: Record<string, string>; stringData?: Record<string, string> };
      const url = secret.stringData?.DATABASE_URL ?? Buffer.from(secret.data?.DATABASE_URL ?? "", "base64").toString("utf8");
      expect(url).toBe(URL_TO_COORDINATOR);
    }
  });

  it("renders a StackGres SGShardedCluster of type citus, every group with a standby", async () => {
    const objs = objects(
      await render("citus.shardedCluster.enabled=true", "citus.shardedCluster.shards.clusters=4", "citus.shardedCluster.shards.storage.storageClass=fast"),
    );
    const sg = objs.find((o) => o.kind === "SGShardedCluster");
    expect(sg?.apiVersion).toBe("stackgres.io/v1alpha1");
    expect(sg?.metadata).toMatchObject({ name: "writ-citus", namespace: NS });
    expect(sg?.spec).toEqual({
      type: "citus",
      database: "writ",
      postgres: { version: "15" },
      coordinator: { instances: 2, pods: { persistentVolume: { size: "10Gi" } } },
      shards: { clusters: 4, instancesPerCluster: 2, pods: { persistentVolume: { size: "10Gi", storageClass: "fast" } } },
    });
  });

  it.each([
    ["a sharded cluster without citus.enabled", ["citus.shardedCluster.enabled=true"], /needs citus.enabled/],
    [
      "a coordinator without a standby",
      ["citus.enabled=true", "citus.shardedCluster.enabled=true", "citus.shardedCluster.coordinator.instances=1"],
      /coordinator.instances/,
    ],
    [
      "a worker group without a standby",
      ["citus.enabled=true", "citus.shardedCluster.enabled=true", "citus.shardedCluster.shards.instancesPerCluster=1"],
      /instancesPerCluster/,
    ],
    ["an unknown WRIT_CITUS", ["citus.enabled=true", "citus.mode=on"], /mode/],
    ["an unknown WRIT_CITUS_DIRECT", ["citus.enabled=true", "citus.direct=auto"], /direct/],
    ["an unknown WRIT_CITUS_DECISION_PARTITIONS", ["citus.enabled=true", "citus.decisionPartitions=day"], /decisionPartitions/],
  ])("refuses %s", async (_what, set, message) => {
    const r = await template(set);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it("refuses Citus without a URL of the coordinator, and beside the CloudNativePG Cluster", async () => {
    const r = await template(["citus.enabled=true"], null);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/databaseUrl/);
    const both = await template(["citus.enabled=true", "postgresCluster.enabled=true"], null);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toMatch(/choose one database/);
  });

  it("applies with server-side dry-run against StackGres's SGShardedCluster schema, every field kept", async () => {
    ok(await env.kubectl(["apply", "-f", SG_CRD]));
    ok(await env.kubectl(["wait", "--for=condition=Established", "--timeout=30s", "crd/sgshardedclusters.stackgres.io"]));
    for (const set of [
      ["citus.shardedCluster.enabled=true"],
      [
        "citus.shardedCluster.enabled=true",
        "citus.shardedCluster.name=bureau",
        "string:citus.shardedCluster.postgresVersion=17",
        "citus.shardedCluster.coordinator.instances=3",
        "citus.shardedCluster.coordinator.storage.size=50Gi",
        "citus.shardedCluster.coordinator.storage.storageClass=fast",
        "citus.shardedCluster.shards.clusters=8",
        "citus.shardedCluster.shards.instancesPerCluster=3",
        "citus.mode=off",
      ],
    ]) {
      const rendered = await render(...set);
      const out = ok(await env.kubectl(["apply", "--dry-run=server", "-f", "-"], { input: rendered }));
      const lines = out.trim().split("\n");
      expect(lines.length).toBe(objects(rendered).length);
      for (const line of lines) expect(line).toMatch(/ (created|configured|unchanged) \(server dry run\)$/);
      const sg = objects(rendered).find((o) => o.kind === "SGShardedCluster") as K8sObject;
      const returned = JSON.parse(ok(await env.kubectl(["create", "--dry-run=server", "-o", "json", "-f", "-"], { input: JSON.stringify(sg) }))) as K8sObject;
      expect(returned.spec).toEqual(sg.spec);
    }
    // A value outside the schema is refused by the API server itself.
    const bad = {
      apiVersion: "stackgres.io/v1alpha1",
      kind: "SGShardedCluster",
      metadata: { name: "bad", namespace: NS },
      spec: {
        type: "vitess",
        database: "writ",
        postgres: { version: "15" },
        coordinator: { instances: 0, pods: { persistentVolume: { size: "1Gi" } } },
        shards: { clusters: 1, instancesPerCluster: 1, pods: { persistentVolume: { size: "1Gi" } } },
      },
    };
    const r = await env.kubectl(["create", "--dry-run=server", "-f", "-"], { input: JSON.stringify(bad) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.type|coordinator\.instances/);
  });
});
