/**
 * `writ serve` as a child process with a kubeconfig (a real kube-apiserver 1.20 from envtest)
 * and Postgres, and NO controller: the records are stored in Postgres directly, and only the
 * data plane's read-only watch sees the cluster. A Delegation patched to `spec.state: revoked`
 * makes verify answer DENY (DELEGATION_REVOKED) within a second while Postgres still holds the
 * grant active; an IntentAgreement patched to revoked answers AGREEMENT_REVOKED; deleting a
 * Delegation that carries the controller's finalizer revokes it; a revocation declared in a
 * namespace of another organization is ignored; with the API server stopped longer than
 * WRIT_WATCH_STALE_MS verify steps up (REVOCATION_STATE_STALE), and it recovers by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { setUpGrantTenant, verifyUntil } from "../helpers/grant-tenant.js";
import {
  agreementResource,
  claimAsOwner,
  createOperator,
  delegationResource,
  verifyOnce,
  type Grant,
  type Operator,
  type VerifyAnswer,
} from "../../hack/bench/propagation/world.js";
import { ensureEnvtest, startEnvtest, type CommandResult, type Envtest } from "../helpers/envtest.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startServeProcess, type ServeProcess } from "../helpers/serve-process.js";

const NS = "acme";
const OTHER_NS = "other-tenant";
const STALE_MS = 1500;

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ok(r: CommandResult): string {
  expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
  return r.stdout;
}

describe("revocation through the data plane's Kubernetes watch", () => {
  let env: Envtest;
  let db: TestDatabase;
  let serve: ServeProcess;
  let acme: Operator;
  let grants: Grant[];
  const kubectl = (args: string[], input?: string) => env.kubectl(args, input === undefined ? {} : { input });
  const verify = (g: Grant) => verifyOnce(serve.url, acme.key, g);
  const until = (g: Grant, test: (a: VerifyAnswer) => boolean, timeoutMs: number, everyMs = 20) =>
    verifyUntil(serve.url, acme.key, g, test, { timeoutMs, everyMs, output: () => serve.output() });
  const metric = async (name: string) => {
    const text = await (await fetch(`${serve.url}/metrics`)).text();
    return text
      .split("\n")
      .filter((l) => l.startsWith(name))
      .join("\n");
  };

  beforeAll(async () => {
    const binDir = await ensureEnvtest();
    env = await startEnvtest({ binDir });
    db = await createTestDatabase();
    ({ operator: acme, grants } = await setUpGrantTenant(env, db, NS, "w", 4));
    const other = await createOperator(db.pool, "Other Corp");
    ok(await kubectl(["create", "namespace", OTHER_NS]));
    ok(await kubectl(["label", "namespace", OTHER_NS, `writ.dev/org-id=${other.orgId}`]));
    const [g0, g1, g2, g3] = grants as [Grant, Grant, Grant, Grant];
    const docs = [delegationResource(g0), delegationResource(g1), agreementResource(g1), delegationResource(g2, { stored: true }), delegationResource(g3)];
    ok(await kubectl(["apply", "-n", NS, "-f", "-"], docs.map((d) => stringify(d)).join("---\n")));
    // No controller runs: record each record's owner as it would have (the watch marks only an owner's revocation).
    const owned: [string, "delegation" | "agreement", string][] = [
      ...grants.map((g): [string, "delegation", string] => ["delegation", "delegation", g.name]),
      ["intentagreement", "agreement", `${g1.name}-agreement`],
    ];
    for (const [resource, kind, name] of owned) {
      const obj = JSON.parse(ok(await kubectl(["get", resource, name, "-n", NS, "-o", "json"]))) as {
        metadata: { namespace?: string; name: string; uid?: string };
      };
      const g = grants.find((x) => x.name === name || `${x.name}-agreement` === name) as Grant;
      await claimAsOwner(db.pool, kind, kind === "delegation" ? g.delegationId : g.agreementId, obj);
    }
    serve = await startServeProcess({
      env: { DATABASE_URL: db.url, KUBECONFIG: env.kubeconfigPath, WRIT_WATCH_STALE_MS: String(STALE_MS), LOG_LEVEL: "info" },
    });
    for (const g of grants) await until(g, (a) => a.verdict === "ALLOW", 30_000, 100);
  }, 30 * 60_000);

  afterAll(async () => {
    await serve?.stop().catch(() => {});
    await db?.drop();
    await env?.stop();
  }, 120_000);

  it("answers DENY within a second of `spec.state: revoked`, with no controller and Postgres unchanged", async () => {
    const g = grants[0] as Grant;
    expect((await verify(g)).verdict).toBe("ALLOW");
    const patch = { metadata: { annotations: { "writ.dev/revoked-at": new Date().toISOString() } }, spec: { state: "revoked" } };
    ok(await kubectl(["patch", "delegation", g.name, "-n", NS, "--type", "merge", "-p", JSON.stringify(patch)]));
    const accepted = Date.now();
    const { answer, at } = await until(g, (a) => a.verdict === "DENY", 5000);
    expect(answer.reasons).toContain("DELEGATION_REVOKED");
    expect(at - accepted).toBeLessThan(1000);
    const row = await db.pool.query<{ revoked_at: Date | null }>("SELECT revoked_at FROM delegations WHERE delegation_id = $1", [g.delegationId]);
    expect(row.rows).toEqual([{ revoked_at: null }]); // the watch alone did it
    const counts = (await metric("writ_revocation_lag_seconds_count")).split("\n");
    expect(counts.find((l) => l.includes('kind="delegation"') && l.includes('source="kubernetes"'))).toMatch(/ 1$/);
    expect(serve.output()).toContain("revocation seen on the Kubernetes watch");
  });

  it("answers AGREEMENT_REVOKED once the IntentAgreement is patched to revoked", async () => {
    const g = grants[1] as Grant;
    ok(await kubectl(["patch", "intentagreement", `${g.name}-agreement`, "-n", NS, "--type", "merge", "-p", JSON.stringify({ spec: { state: "revoked" } })]));
    const { answer } = await until(g, (a) => a.verdict === "DENY", 5000);
    expect(answer.reasons).toContain("AGREEMENT_REVOKED");
  });

  it("revokes a Delegation being deleted through the controller's finalizer", async () => {
    const g = grants[2] as Grant;
    ok(await kubectl(["delete", "delegation", g.name, "-n", NS, "--wait=false"]));
    const { answer } = await until(g, (a) => a.verdict === "DENY", 5000);
    expect(answer.reasons).toContain("DELEGATION_REVOKED");
    // The finalizer holds it (no controller runs): it is only being deleted.
    expect(JSON.parse(ok(await kubectl(["get", "delegation", g.name, "-n", NS, "-o", "json"]))).metadata.deletionTimestamp).toEqual(expect.any(String));
  });

  it("ignores a revocation declared in another organization's namespace", async () => {
    const g = grants[3] as Grant;
    const forged = delegationResource({ ...g, name: "forged", delegation: { ...g.delegation, status: "revoked" } }, { stored: true });
    ok(await kubectl(["apply", "-n", OTHER_NS, "-f", "-"], stringify(forged)));
    await expect.poll(() => serve.output(), { timeout: 10_000, interval: 100 }).toContain("not stored for its namespace's organization");
    expect((await verify(g)).verdict).toBe("ALLOW");
  });

  it("steps up while the API server is down longer than the bound, and recovers by itself", async () => {
    const g = grants[3] as Grant;
    const seen: VerifyAnswer[] = [];
    let restarting = true;
    const restart = env.restartApiServer().finally(() => (restarting = false));
    while (restarting) {
      seen.push(await verify(g));
      await delay(100);
    }
    await restart;
    const stale = seen.find((a) => a.verdict === "STEP_UP");
    expect(stale?.reasons).toEqual(["REVOCATION_STATE_STALE"]);
    expect(await metric("writ_kube_watch_up")).toMatch(/writ_kube_watch_up [01]/);
    await until(g, (a) => a.verdict === "ALLOW", 60_000, 200);
    expect(await metric("writ_kube_watch_up ")).toBe("writ_kube_watch_up 1");
    expect(serve.output()).toContain("revocation state is stale: verify steps up (REVOCATION_STATE_STALE)");
  });
});
