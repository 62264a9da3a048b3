/**
 * `.status` says what verify answers, and why: `writ controller` (a child, its Postgres through
 * a TCP proxy the test can cut) and `writ serve` (a child, without a Kubernetes watch, so it
 * answers from Postgres only) against a real kube-apiserver 1.20 (envtest), no admission
 * webhook (the controller's own checks are under test). For each case the resource's phase,
 * Ready reason and message are checked against a real verify:
 * - a refused update keeps the stored grant in force: phase Active (not Invalid), Ready=False
 *   with the refusal and "verify still answers with the record stored before"; verify ALLOWs;
 * - an agreement under a revoked Delegation: phase Revoked, DELEGATION_REVOKED; verify DENYs;
 * - an agreement whose Delegation was deleted: phase Revoked (not Pending); verify DENYs;
 * - the deleted Delegation re-applied: phase Revoked, the message says "revoked by deletion" and
 *   that a new grant needs a new delegation_id; verify still DENYs;
 * - a revocation made in Postgres (the HTTP path) shows in the status within seconds (LISTEN);
 * - a hand-written status patch is corrected within seconds, not at the 600 s resync;
 * - Postgres unreachable: a new resource's status says so (phase Unknown, StoreUnavailable)
 *   instead of staying empty, and becomes Ready once Postgres is back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { agreementResource, delegationResource, verifyOnce, type Grant, type Operator, type VerifyAnswer } from "../../hack/bench/propagation/world.js";
import { setUpGrantTenant } from "../helpers/grant-tenant.js";
import { revokeAndRecord } from "../../src/store/revocation/record.js";
import { withTransaction } from "../../src/store/pool.js";
import { startControllerProcess, type ControllerProcess } from "../helpers/controller-process.js";
import { ensureEnvtest, startEnvtest, type Envtest } from "../helpers/envtest.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { ok } from "../helpers/sample-tenant.js";
import { startServeProcess, type ServeProcess } from "../helpers/serve-process.js";
import { startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { stopAll } from "../helpers/teardown.js";

const NS = "acme";

interface Resource {
  metadata: { name: string; generation: number };
  spec: Record<string, unknown>;
  status?: { phase?: string; effectiveStatus?: string; conditions?: { type: string; status: string; reason: string; message: string }[] };
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ready = (r: Resource) => r.status?.conditions?.find((c) => c.type === "Ready");

describe("status that tells the truth", () => {
  let env: Envtest;
  let db: TestDatabase;
  let proxy: TcpProxy;
  let controller: ControllerProcess;
  let serve: ServeProcess;
  let acme: Operator;
  let grants: Grant[];
  const kubectl = (args: string[], input?: string) => env.kubectl(args, input === undefined ? {} : { input });
  const get = async (kind: string, name: string) => JSON.parse(ok(await kubectl(["get", kind, name, "-n", NS, "-o", "json"]))) as Resource;
  const until = async (kind: string, name: string, test: (r: Resource) => boolean, timeoutMs = 30_000): Promise<Resource> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await get(kind, name);
      if (test(r)) return r;
      if (Date.now() > deadline) throw new Error(`${kind}/${name}: ${JSON.stringify(r.status, null, 2)}\n${controller.output().slice(-4000)}`);
      await delay(200);
    }
  };
  const verify = (g: Grant): Promise<VerifyAnswer> => verifyOnce(serve.url, acme.key, g);
  const grant = (i: number) => grants[i] as Grant;

  beforeAll(async () => {
    env = await startEnvtest({ binDir: await ensureEnvtest() });
    db = await createTestDatabase();
    ({ operator: acme, grants } = await setUpGrantTenant(env, db, NS, "t", 6));
    const u = new URL(db.url);
    proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port) });
    controller = await startControllerProcess({
      kubeconfigPath: env.kubeconfigPath,
      databaseUrl: throughProxy(db.url, proxy),
      podName: "ctl-status",
      lease: null,
    });
    serve = await startServeProcess({ env: { DATABASE_URL: db.url, WRIT_KUBE_WATCH: "off", LOG_LEVEL: "warn" } });
    const docs = grants.slice(0, 5).flatMap((g) => [delegationResource(g), agreementResource(g)]);
    ok(await kubectl(["apply", "-n", NS, "-f", "-"], docs.map((d) => stringify(d)).join("---\n")));
    for (const g of grants.slice(0, 5)) {
      await until("wdel", g.name, (r) => ready(r)?.status === "True");
      await until("wia", `${g.name}-agreement`, (r) => ready(r)?.status === "True");
      expect((await verify(g)).verdict).toBe("ALLOW");
    }
  }, 30 * 60_000);

  afterAll(() => stopAll(serve, controller, proxy, db, env), 120_000);

  it("a refused update leaves the stored grant in force, and says so: phase Active, Ready=False with the refusal; verify ALLOWs", async () => {
    const g = grant(0);
    const later = new Date(Date.parse(g.delegation.expires_at) + 3600_000).toISOString();
    ok(await kubectl(["patch", "wdel", g.name, "-n", NS, "--type=merge", "-p", JSON.stringify({ spec: { expires_at: later } })]));
    const r = await until("wdel", g.name, (x) => ready(x)?.status === "False");
    expect(r.status?.phase).toBe("Active");
    expect(r.status?.effectiveStatus).toBe("active");
    expect(ready(r)).toMatchObject({
      reason: "SPEC_INVALID",
      message: expect.stringContaining(`verify still answers with the record stored before: delegation ${g.delegationId}, effective status active`),
    });
    expect((await verify(g)).verdict).toBe("ALLOW");
    const table = ok(await kubectl(["get", "wdel", g.name, "-n", NS]))
      .split("\n")[1]
      ?.split(/\s+/);
    expect(table?.slice(0, 4)).toEqual([g.name, "False", "Active", "SPEC_INVALID"]);
  });

  it("an agreement under a revoked Delegation shows Revoked (DELEGATION_REVOKED), as verify answers", async () => {
    const g = grant(1);
    ok(await kubectl(["patch", "wdel", g.name, "-n", NS, "--type=merge", "-p", '{"spec":{"state":"revoked"}}']));
    const a = await until("wia", `${g.name}-agreement`, (x) => x.status?.phase === "Revoked");
    expect(ready(a)).toMatchObject({
      status: "False",
      reason: "DELEGATION_REVOKED",
      message: expect.stringContaining(`the delegation it is bound to, ${g.delegationId}, is revoked`),
    });
    expect(await verify(g)).toMatchObject({ verdict: "DENY", reasons: expect.arrayContaining(["DELEGATION_REVOKED"]) });
  });

  it("an agreement whose Delegation was deleted shows Revoked, not Pending; re-applying the Delegation stays revoked and says why", async () => {
    const g = grant(2);
    ok(await kubectl(["delete", "wdel", g.name, "-n", NS, "--timeout=60s"]));
    const a = await until("wia", `${g.name}-agreement`, (x) => x.status?.phase === "Revoked");
    expect(ready(a)).toMatchObject({ reason: "DELEGATION_REVOKED", message: expect.stringContaining("was revoked by deletion") });
    expect(await verify(g)).toMatchObject({ verdict: "DENY", reasons: expect.arrayContaining(["DELEGATION_REVOKED"]) });

    ok(await kubectl(["apply", "-n", NS, "-f", "-"], stringify(delegationResource(g))));
    const d = await until("wdel", g.name, (x) => x.status?.phase === "Revoked");
    expect(ready(d)?.reason).toBe("DELEGATION_REVOKED");
    expect(ready(d)?.message).toMatch(
      new RegExp(
        `delegation ${g.delegationId} was revoked by deletion at .*the Delegation ${NS}/${g.name} was deleted.*re-applying the same manifest cannot restore it; a new grant needs a new delegation_id`,
      ),
    );
    expect((await verify(g)).verdict).toBe("DENY");
  });

  it("a revocation made in Postgres (the HTTP path) reaches the status within seconds", async () => {
    const g = grant(3);
    const at = new Date();
    await withTransaction(db.pool, (c) =>
      revokeAndRecord(c, { kind: "delegation", orgId: acme.orgId, id: g.delegationId }, { reason: "revoked over HTTP", by: "principal", at }, { signer: null }),
    );
    const d = await until("wdel", g.name, (x) => x.status?.phase === "Revoked", 10_000);
    expect(ready(d)).toMatchObject({ reason: "DELEGATION_REVOKED", message: expect.stringContaining("revoked over HTTP") });
    await until("wia", `${g.name}-agreement`, (x) => x.status?.phase === "Revoked", 10_000);
  });

  it("corrects a hand-written status within seconds, not at the periodic resync", async () => {
    const g = grant(4);
    const forged = {
      status: {
        phase: "Revoked",
        conditions: [{ type: "Ready", status: "False", reason: "DELEGATION_REVOKED", message: "forged", lastTransitionTime: "2026-01-01T00:00:00Z" }],
      },
    };
    ok(await kubectl(["patch", "wdel", g.name, "-n", NS, "--subresource=status", "--type=merge", "-p", JSON.stringify(forged)]));
    const started = Date.now();
    const r = await until("wdel", g.name, (x) => x.status?.phase === "Active" && ready(x)?.status === "True", 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(ready(r)?.reason).toBe("Reconciled");
  });

  it("says Postgres is unreachable instead of leaving the status empty, and recovers", async () => {
    const g = grant(5);
    proxy.cut();
    try {
      ok(await kubectl(["apply", "-n", NS, "-f", "-"], stringify(delegationResource(g))));
      const r = await until("wdel", g.name, (x) => x.status?.phase === "Unknown");
      expect(ready(r)).toMatchObject({ status: "Unknown", reason: "StoreUnavailable", message: expect.stringContaining("Postgres cannot be reached") });
    } finally {
      proxy.restore();
    }
    await until("wdel", g.name, (x) => ready(x)?.status === "True", 60_000);
  });
});
