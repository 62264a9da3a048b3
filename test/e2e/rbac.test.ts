/**
 * Least privilege, on a real kube-apiserver 1.20 (envtest) with RBAC: the chart's roles are
 * rendered by a real helm and applied, and `writ controller` and `writ serve` run as their
 * service accounts (static tokens for `system:serviceaccount:writ-system:...`). With exactly those
 * rules the controller creates (stores, finalizer, status, Events), follows an edit, revokes and
 * deletes, and holds its Lease, and nothing it does is forbidden; the data plane's watch syncs.
 * The rules hold no verb beyond those (kubectl auth can-i). The tenant roles: `<fullname>-edit`
 * may declare and delete but not write status, `<fullname>-view` only reads, and both carry the
 * aggregation labels of Kubernetes' default roles.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SAMPLE_NAMES } from "../../src/core/samples/index.js";
import { startControllerProcess, type ControllerProcess } from "../helpers/controller-process.js";
import { ensureEnvtest, kubeconfigFor, startEnvtest, type Envtest } from "../helpers/envtest.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { ok, setUpSampleTenant, type SampleTenant } from "../helpers/sample-tenant.js";
import { startServeProcess, type ServeProcess } from "../helpers/serve-process.js";
import { stopAll } from "../helpers/teardown.js";

const CHART = fileURLToPath(new URL("../../charts/writ", import.meta.url));
const RELEASE_NS = "writ-system";
const NS = "acme";
const token = () => randomBytes(16).toString("hex");
const tokens = { controller: token(), dataPlane: token(), alice: token(), bob: token() };
const sa = (name: string) => ({
  user: `system:serviceaccount:${RELEASE_NS}:${name}`,
  groups: ["system:serviceaccounts", `system:serviceaccounts:${RELEASE_NS}`, "system:authenticated"],
});

interface Resource {
  metadata: { finalizers?: string[]; labels?: Record<string, string> };
  status?: { phase?: string; observedGeneration?: number; conditions?: { type: string; status: string }[] };
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the chart's RBAC is what the processes need, and no more", () => {
  let env: Envtest;
  let db: TestDatabase;
  let tenant: SampleTenant;
  let controller: ControllerProcess;
  let serve: ServeProcess;
  let dir: string;
  const kubectl = (args: string[], input?: string) => env.kubectl(args, input === undefined ? {} : { input });
  const get = async (kind: string, name: string) => JSON.parse(ok(await kubectl(["get", kind, name, "-n", NS, "-o", "json"]))) as Resource;
  const until = async (kind: string, name: string, test: (r: Resource) => boolean) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await get(kind, name);
      if (test(r)) return r;
      if (Date.now() > deadline) throw new Error(`${kind}/${name}: ${JSON.stringify(r.status)}\n${controller.output().slice(-4000)}`);
      await delay(250);
    }
  };
  const can = async (as: string, verb: string, resource: string, ns: string, sub?: string) =>
    (await kubectl(["auth", "can-i", verb, resource, "-n", ns, `--as=${as}`, ...(sub ? [`--subresource=${sub}`] : [])])).stdout.trim();

  beforeAll(async () => {
    env = await startEnvtest({
      binDir: await ensureEnvtest(),
      tokens: [
        { token: tokens.controller, ...sa("writ-controller") },
        { token: tokens.dataPlane, ...sa("writ-data-plane") },
        { token: tokens.alice, user: "alice", groups: ["system:authenticated"] },
        { token: tokens.bob, user: "bob", groups: ["system:authenticated"] },
      ],
    });
    db = await createTestDatabase();
    tenant = await setUpSampleTenant(env, db, NS);
    ok(await kubectl(["create", "namespace", RELEASE_NS]));
    // The chart's RBAC and service accounts, as helm renders them (no workloads: the processes run here).
    const rendered = ok(
      await env.helm([
        "template",
        "writ",
        CHART,
        "-n",
        RELEASE_NS,
        "--set",
        `secret.databaseUrl=${db.url}`,
        "--show-only",
        "templates/rbac-controller.yaml",
        "--show-only",
        "templates/rbac-data-plane.yaml",
        "--show-only",
        "templates/rbac-tenants.yaml",
        "--show-only",
        "templates/serviceaccount.yaml",
      ]),
    );
    ok(await kubectl(["apply", "-f", "-"], rendered));
    ok(await kubectl(["create", "rolebinding", "alice-edits", "-n", NS, "--clusterrole=writ-edit", "--user=alice"]));
    ok(await kubectl(["create", "rolebinding", "bob-views", "-n", NS, "--clusterrole=writ-view", "--user=bob"]));
    dir = await mkdtemp(join(tmpdir(), "writ-rbac-"));
    const controllerConfig = join(dir, "controller.kubeconfig");
    const dataPlaneConfig = join(dir, "data-plane.kubeconfig");
    await writeFile(controllerConfig, kubeconfigFor(env.server, tokens.controller), { mode: 0o600 });
    await writeFile(dataPlaneConfig, kubeconfigFor(env.server, tokens.dataPlane), { mode: 0o600 });
    controller = await startControllerProcess({
      kubeconfigPath: controllerConfig,
      databaseUrl: db.url,
      podName: "writ-controller-0",
      lease: "writ-controller",
      env: { WRIT_LEADER_ELECTION_NAMESPACE: RELEASE_NS, POD_NAMESPACE: RELEASE_NS },
    });
    serve = await startServeProcess({ env: { DATABASE_URL: db.url, KUBECONFIG: dataPlaneConfig, LOG_LEVEL: "info" } });
  }, 30 * 60_000);

  afterAll(() => stopAll(serve, controller, db, env, tenant, dir), 120_000);

  it("lets the controller create, edit, revoke and delete with exactly the chart's rules", async () => {
    ok(await kubectl(["apply", "-n", NS, "-f", tenant.samples]));
    ok(
      await kubectl([
        "wait",
        "-n",
        NS,
        "--for=condition=Ready",
        "--timeout=60s",
        `delegation/${SAMPLE_NAMES.delegation}`,
        `delegation/${SAMPLE_NAMES.chainedDelegation}`,
        `intentagreement/${SAMPLE_NAMES.agreement}`,
        `subscription/${SAMPLE_NAMES.subscription}`,
      ]),
    );
    expect((await get("wdel", SAMPLE_NAMES.delegation)).metadata.finalizers).toContain("writ.dev/revoke");
    const events = ok(await kubectl(["get", "events", "-n", NS, "-o", "jsonpath={.items[*].source.component}"]));
    expect(events).toContain("writ-controller");
    const lease = JSON.parse(ok(await kubectl(["get", "lease", "writ-controller", "-n", RELEASE_NS, "-o", "json"]))) as { spec: { holderIdentity: string } };
    expect(lease.spec.holderIdentity).toMatch(/^writ-controller-0_/);

    // Edit: a new generation is reconciled.
    ok(await kubectl(["patch", "wdel", SAMPLE_NAMES.delegation, "-n", NS, "--type=merge", "-p", '{"spec":{"purpose":"Office supplies only, from now on."}}']));
    await until("wdel", SAMPLE_NAMES.delegation, (r) => r.status?.observedGeneration === 2);
    // Revoke, then delete.
    ok(await kubectl(["patch", "wdel", SAMPLE_NAMES.chainedDelegation, "-n", NS, "--type=merge", "-p", '{"spec":{"state":"revoked"}}']));
    await until("wdel", SAMPLE_NAMES.chainedDelegation, (r) => r.status?.phase === "Revoked");
    ok(await kubectl(["delete", "wdel", SAMPLE_NAMES.delegation, "-n", NS, "--timeout=60s"]));
    const row = await db.pool.query<{ revoked_by: string }>("SELECT revoked_by FROM delegations WHERE delegation_id = 'del_acme_procurement'");
    expect(row.rows[0]?.revoked_by).toBe("controller");
    ok(await kubectl(["delete", "wsub", SAMPLE_NAMES.subscription, "-n", NS, "--timeout=60s"]));
    expect(controller.output()).not.toMatch(/forbidden/i);
  });

  it("lets the data plane's watch sync with list and watch only", async () => {
    const deadline = Date.now() + 30_000;
    let body: unknown;
    for (;;) {
      const r = await fetch(`${serve.url}/readyz`);
      body = await r.json();
      if (r.status === 200) break;
      if (Date.now() > deadline) throw new Error(`${JSON.stringify(body)}\n${serve.output().slice(-3000)}`);
      await delay(200);
    }
    expect(body).toEqual({ status: "ok", database: "ok" });
    expect(serve.output()).not.toMatch(/forbidden/i);
  });

  it("grants the service accounts no verb beyond those", async () => {
    const ctl = sa("writ-controller").user;
    const dp = sa("writ-data-plane").user;
    for (const kind of ["delegations.writ.dev", "intentagreements.writ.dev", "subscriptions.writ.dev"]) {
      for (const verb of ["list", "watch", "patch"]) expect(await can(ctl, verb, kind, NS)).toBe("yes");
      for (const verb of ["get", "create", "update", "delete"]) expect(await can(ctl, verb, kind, NS)).toBe("no");
      expect(await can(ctl, "patch", kind, NS, "status")).toBe("yes");
      expect(await can(ctl, "update", kind, NS, "status")).toBe("no");
      expect(await can(ctl, "update", kind, NS, "finalizers")).toBe("no");
    }
    expect(await can(ctl, "create", "events", NS)).toBe("yes");
    expect(await can(ctl, "patch", "events", NS)).toBe("no");
    expect(await can(ctl, "create", "events.events.k8s.io", NS)).toBe("no");
    for (const verb of ["list", "watch"]) expect(await can(dp, verb, "delegations.writ.dev", NS)).toBe("yes");
    expect(await can(dp, "get", "delegations.writ.dev", NS)).toBe("no");
    expect(await can(dp, "list", "subscriptions.writ.dev", NS)).toBe("no");
  });

  it("ships tenant roles: edit declares and deletes but never writes status; view reads; both aggregate into the default roles", async () => {
    for (const verb of ["create", "update", "patch", "delete"]) expect(await can("alice", verb, "delegations.writ.dev", NS)).toBe("yes");
    expect(await can("alice", "patch", "delegations.writ.dev", NS, "status")).toBe("no");
    expect(await can("alice", "create", "delegations.writ.dev", "default")).toBe("no");
    expect(await can("bob", "get", "intentagreements.writ.dev", NS)).toBe("yes");
    expect(await can("bob", "create", "intentagreements.writ.dev", NS)).toBe("no");
    const labels = async (name: string) => (JSON.parse(ok(await kubectl(["get", "clusterrole", name, "-o", "json"]))) as Resource).metadata.labels;
    expect(await labels("writ-view")).toMatchObject({ "rbac.authorization.k8s.io/aggregate-to-view": "true" });
    expect(await labels("writ-edit")).toMatchObject({
      "rbac.authorization.k8s.io/aggregate-to-edit": "true",
      "rbac.authorization.k8s.io/aggregate-to-admin": "true",
    });
  });
});
