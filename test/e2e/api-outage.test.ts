/**
 * Payments through an API server outage: a real kube-apiserver 1.20 (envtest) stopped and
 * started again by its pid on the same port and data, `writ controller` (a child, leader-elected,
 * writing its heartbeat to Postgres) and `writ serve` (a child watching the cluster, its Postgres
 * through a TCP proxy the test can cut), verifies running all along:
 * - API server stopped for 30 s: every verify still ALLOWs (the controller's path vouches: the
 *   API server is unreachable from both, and the controller's last observation is recent);
 *   `/readyz` answers 200 `degraded` and `writ_revocation_degraded` is 1;
 * - a revocation applied right after the API server returns is enforced within the usual bound
 *   (WRIT_WATCH_STALE_MS), then DENY DELEGATION_REVOKED; `/readyz` is `ok` again;
 * - the data plane alone cut off from the API server (its kubeconfig goes through a TCP proxy):
 *   the controller still observes the cluster, so verify ALLOWs (`degraded`), and a revocation
 *   declared meanwhile reaches verify through the controller and Postgres;
 * - a partition (the data plane cut off from the API server and from Postgres) fails closed:
 *   no ALLOW, `/readyz` 503;
 * - with the API server down and the controller gone (no fresh heartbeat), verify fails closed.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { agreementResource, delegationResource, verifyOnce, type Grant, type Operator, type VerifyAnswer } from "../../hack/bench/propagation/world.js";
import { setUpGrantTenant, verifyUntil } from "../helpers/grant-tenant.js";
import { startControllerProcess, type ControllerProcess } from "../helpers/controller-process.js";
import { ensureEnvtest, kubeconfigFor, startEnvtest, type Envtest } from "../helpers/envtest.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { ok } from "../helpers/sample-tenant.js";
import { startServeProcess, type ServeProcess } from "../helpers/serve-process.js";
import { startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { stopAll } from "../helpers/teardown.js";

const NS = "acme";
const STALE_MS = 2000;
const OUTAGE_MS = 30_000;

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("payments through an API server outage", () => {
  let env: Envtest;
  let db: TestDatabase;
  let proxy: TcpProxy;
  let apiProxy: TcpProxy;
  let dir: string;
  let controller: ControllerProcess;
  let serve: ServeProcess;
  let acme: Operator;
  let grants: Grant[];
  const kubectl = (args: string[], input?: string) => env.kubectl(args, input === undefined ? {} : { input });
  const verify = (g: Grant): Promise<VerifyAnswer> => verifyOnce(serve.url, acme.key, g);
  const grant = (i: number) => grants[i] as Grant;
  const readyz = async () => {
    const r = await fetch(`${serve.url}/readyz`);
    return { status: r.status, body: (await r.json()) as Record<string, string> };
  };
  const metric = async (name: string) => {
    const text = await (await fetch(`${serve.url}/metrics`)).text();
    return text
      .split("\n")
      .filter((l) => l.startsWith(name))
      .join("\n");
  };
  /** Polls /readyz until its body passes `test` (30 s at most). */
  const readyzUntil = async (test: (b: Record<string, string>) => boolean) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await readyz();
      if (test(r.body)) return r.body;
      if (Date.now() > deadline) throw new Error(`/readyz: ${JSON.stringify(r)}\n${serve.output().slice(-3000)}`);
      await delay(200);
    }
  };
  const until = (g: Grant, test: (a: VerifyAnswer) => boolean, timeoutMs: number, everyMs = 50) =>
    verifyUntil(serve.url, acme.key, g, test, { timeoutMs, everyMs, output: () => serve.output() });

  beforeAll(async () => {
    env = await startEnvtest({ binDir: await ensureEnvtest() });
    db = await createTestDatabase();
    ({ operator: acme, grants } = await setUpGrantTenant(env, db, NS, "o", 3));
    ok(
      await kubectl(
        ["apply", "-n", NS, "-f", "-"],
        grants
          .flatMap((g) => [delegationResource(g), agreementResource(g)])
          .map((d) => stringify(d))
          .join("---\n"),
      ),
    );
    controller = await startControllerProcess({ kubeconfigPath: env.kubeconfigPath, databaseUrl: db.url, podName: "ctl-outage", lease: "writ-controller" });
    ok(await kubectl(["wait", "-n", NS, "--for=condition=Ready", "--timeout=60s", ...grants.map((g) => `delegation/${g.name}`)]));
    const u = new URL(db.url);
    proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port) });
    // The data plane reaches the API server through a proxy too (the API server's certificate is
    // not checked by this test kubeconfig, so TLS passes through the TCP proxy).
    const api = new URL(env.server);
    apiProxy = await startTcpProxy({ host: api.hostname, port: Number(api.port) });
    dir = await mkdtemp(join(tmpdir(), "writ-outage-"));
    const kubeconfig = join(dir, "kubeconfig");
    await writeFile(kubeconfig, kubeconfigFor(`https://127.0.0.1:${apiProxy.port}`, env.token), { mode: 0o600 });
    serve = await startServeProcess({
      env: {
        DATABASE_URL: throughProxy(db.url, proxy),
        KUBECONFIG: kubeconfig,
        WRIT_WATCH_STALE_MS: String(STALE_MS),
        WRIT_API_OUTAGE_GRACE_MS: "60000",
        WRIT_CONTROLLER_LEASE: "writ-controller",
        LOG_LEVEL: "info",
      },
    });
    for (const g of grants) await until(g, (a) => a.verdict === "ALLOW", 30_000, 100);
    expect((await readyz()).body).toEqual({ status: "ok", database: "ok" });
  }, 30 * 60_000);

  afterAll(() => stopAll(serve, controller, proxy, apiProxy, dir, db, env), 120_000);

  it("keeps answering ALLOW through a 30 s API server outage, and says it is degraded", async () => {
    await env.stopApiServer();
    const started = Date.now();
    const verdicts = new Map<string, number>();
    let degradedSeen = false;
    while (Date.now() - started < OUTAGE_MS) {
      const a = await verify(grant(0));
      const key = `${a.verdict ?? a.status} ${(a.reasons ?? []).join(",")}`.trim();
      verdicts.set(key, (verdicts.get(key) ?? 0) + 1);
      if (!degradedSeen && Date.now() - started > 2 * STALE_MS) {
        const r = await readyz();
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({
          status: "degraded",
          database: "ok",
          revocations: expect.stringContaining("the API server is unreachable from this process and from the controller"),
        });
        expect(await metric("writ_revocation_degraded")).toContain("writ_revocation_degraded 1");
        expect(await metric("writ_revocation_fresh_via")).toContain('writ_revocation_fresh_via{path="outage"} 1');
        degradedSeen = true;
      }
      await delay(200);
    }
    expect(degradedSeen).toBe(true);
    expect([...verdicts.keys()], JSON.stringify([...verdicts])).toEqual(["ALLOW"]);
    expect(verdicts.get("ALLOW")).toBeGreaterThan(50);
  }, 120_000);

  it("enforces a revocation applied right after the API server returns within the usual bound", async () => {
    await env.startApiServer();
    ok(await kubectl(["patch", "wdel", grant(1).name, "-n", NS, "--type=merge", "-p", '{"spec":{"state":"revoked"}}']));
    const patched = Date.now();
    const first = await until(grant(1), (a) => a.verdict !== "ALLOW", STALE_MS + 3000);
    expect(first.at - patched).toBeLessThanOrEqual(STALE_MS + 1000);
    const denied = await until(grant(1), (a) => a.verdict === "DENY", 30_000);
    expect(denied.answer.reasons).toContain("DELEGATION_REVOKED");
    expect((await verify(grant(0))).verdict).toBe("ALLOW");
    await readyzUntil((b) => b.status === "ok");
    expect(await metric("writ_revocation_degraded")).toContain("writ_revocation_degraded 0");
  }, 120_000);

  it("cut off from the API server alone, decides on the controller's path: ALLOW, and a revocation arrives through Postgres", async () => {
    apiProxy.cut();
    try {
      // Once the watch is down past its bound, the controller's heartbeat vouches (the controller itself still watches).
      await delay(STALE_MS);
      const r = await readyzUntil((b) => b.status === "degraded" && (b.revocations ?? "").includes("observes the cluster"));
      expect(r.revocations).toContain("the controller (ctl-outage_");
      expect((await verify(grant(0))).verdict).toBe("ALLOW");
      expect(await metric("writ_revocation_fresh_via")).toContain('writ_revocation_fresh_via{path="controller"} 1');
      ok(await kubectl(["patch", "wdel", grant(2).name, "-n", NS, "--type=merge", "-p", '{"spec":{"state":"revoked"}}']));
      const patched = Date.now();
      const denied = await until(grant(2), (a) => a.verdict !== "ALLOW", 10_000);
      expect(denied.answer).toMatchObject({ verdict: "DENY", reasons: expect.arrayContaining(["DELEGATION_REVOKED"]) });
      expect(denied.at - patched).toBeLessThanOrEqual(STALE_MS + 1000);
    } finally {
      apiProxy.restore();
    }
    await readyzUntil((b) => b.status === "ok");
  }, 120_000);

  it("fails closed when cut off from both the API server and Postgres (a partition)", async () => {
    apiProxy.cut();
    proxy.cut();
    try {
      const answers: VerifyAnswer[] = [];
      const started = Date.now();
      while (Date.now() - started < 3 * STALE_MS) {
        answers.push(await verify(grant(0)));
        await delay(200);
      }
      expect(answers.filter((a) => a.verdict === "ALLOW")).toEqual([]);
      expect((await readyz()).status).toBe(503);
    } finally {
      proxy.restore();
      apiProxy.restore();
    }
    await until(grant(0), (a) => a.verdict === "ALLOW", 30_000, 200);
  }, 120_000);

  it("fails closed when the API server is down and the controller's heartbeat is not fresh", async () => {
    await env.stopApiServer();
    await controller.stop("SIGKILL");
    const stale = await until(grant(0), (a) => a.verdict === "STEP_UP", 4 * STALE_MS + 5000, 200);
    expect(stale.answer.reasons).toContain("REVOCATION_STATE_STALE");
    const r = await readyz();
    expect(r.status).toBe(503);
    expect(r.body.error).toContain("revocation state is stale");
    await env.startApiServer();
    await until(grant(0), (a) => a.verdict === "ALLOW", 30_000, 200);
  }, 120_000);
});
