/**
 * `writ controller` as a child process against a real kube-apiserver 1.20 (envtest) and Postgres:
 * the samples reconcile to Ready=True with their records stored and ONE agreement log entry
 * (also after a spec change that keeps the mandates); a widened sub-delegation is refused with
 * CHAIN_SCOPE_WIDENED naming the field; an update that silently extends a stored grant is
 * refused; a namespace without an organization label is refused;
 * the informers recover from an API server restart; two replicas elect one leader through the
 * Lease and the standby takes over when the leader is SIGKILLed; `spec.state: revoked` revokes
 * (and the sub-delegation below follows); deleting a resource revokes its record through the
 * finalizer and keeps the row; each revocation appends exactly ONE `revocation` log entry, and
 * a later spec change or re-apply appends none.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { SAMPLE_NAMES } from "../../src/core/samples/index.js";
import type { Org } from "../../src/store/orgs.js";
import { startControllerProcess, type ControllerProcess } from "../helpers/controller-process.js";
import { ensureEnvtest, startEnvtest, type Envtest } from "../helpers/envtest.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTcpProxy, throughProxy } from "../helpers/tcp-proxy.js";
import { ok, setUpSampleTenant, type SampleTenant } from "../helpers/sample-tenant.js";

const NS = "acme";
const LEASE = "writ-controller";

interface Resource {
  metadata: { name: string; generation: number; finalizers?: string[]; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: {
    phase?: string;
    observedGeneration?: number;
    effectiveStatus?: string;
    logSequence?: number;
    subscriptionId?: string;
    revokedAt?: string;
    conditions?: { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[];
  };
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Controller = ControllerProcess;
const startController = (env: Envtest, db: TestDatabase, podName: string): Promise<Controller> =>
  startControllerProcess({ kubeconfigPath: env.kubeconfigPath, databaseUrl: db.url, podName, lease: LEASE });

describe("writ controller against a real API server and Postgres", () => {
  let env: Envtest;
  let db: TestDatabase;
  let org: Org;
  let samples: string;
  let tenant: SampleTenant;
  const controllers: Controller[] = [];
  const kubectl = (args: string[], input?: string) => env.kubectl(args, input === undefined ? {} : { input });
  const get = async (kind: string, name: string) => JSON.parse(ok(await kubectl(["get", kind, name, "-n", NS, "-o", "json"]))) as Resource;
  const ready = (r: Resource) => r.status?.conditions?.find((c) => c.type === "Ready");
  /** Polls `kind/name` until `test` holds (or fails with the last state and the controllers' logs). */
  const until = async (kind: string, name: string, test: (r: Resource) => boolean, timeoutMs = 60_000): Promise<Resource> => {
    const deadline = Date.now() + timeoutMs;
    let last: Resource | undefined;
    for (;;) {
      last = await get(kind, name);
      if (test(last)) return last;
      if (Date.now() > deadline) {
        throw new Error(
          `${kind}/${name} did not reach the expected state:\n${JSON.stringify(last.status, null, 2)}\n${controllers.map((c) => c.output().slice(-4000)).join("\n---\n")}`,
        );
      }
      await delay(250);
    }
  };
  /** Bodies of the `revocation` log entries, in order. */
  const revocationEntries = async () =>
    (await db.pool.query<{ body: string }>("SELECT body FROM log_entries WHERE kind = 'revocation' ORDER BY sequence")).rows.map(
      (r) => JSON.parse(r.body) as Record<string, unknown>,
    );
  const sample = async (file: string) => parse(await readFile(join(samples, file), "utf8")) as Resource & { apiVersion: string; kind: string };

  beforeAll(async () => {
    const binDir = await ensureEnvtest();
    env = await startEnvtest({ binDir });
    db = await createTestDatabase();
    tenant = await setUpSampleTenant(env, db, NS);
    org = tenant.org;
    samples = tenant.samples;
    ok(await kubectl(["create", "namespace", "unbound"]));
    controllers.push(await startController(env, db, "ctl-a"));
  }, 30 * 60_000);

  afterAll(async () => {
    for (const c of controllers) await c.stop("SIGKILL").catch(() => {});
    await db?.drop();
    await env?.stop();
    await tenant?.cleanUp();
  }, 120_000);

  it("reconciles the samples to Ready=True, stores them, and logs the agreement once", async () => {
    ok(await kubectl(["apply", "-n", NS, "-f", samples]));
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
    const root = await get("wdel", SAMPLE_NAMES.delegation);
    expect(root.status).toMatchObject({ observedGeneration: root.metadata.generation, effectiveStatus: expect.stringMatching(/^(active|suspended)$/) });
    expect(root.metadata.finalizers).toContain("writ.dev/revoke");
    expect(root.metadata.annotations?.["writ.dev/record-id"]).toBe("del_acme_procurement");
    expect(root.status?.conditions?.map((c) => [c.type, c.status])).toEqual([
      ["Valid", "True"],
      ["ChainValid", "True"],
      ["Bound", "True"],
      ["Stored", "True"],
      ["Ready", "True"],
    ]);
    const chained = await get("wdel", SAMPLE_NAMES.chainedDelegation);
    expect(chained.status).toMatchObject({ chainDepth: 1 });
    // Its writes are named in managedFields (the finalizer, the annotation, the status), never "unknown".
    const managed = JSON.parse(ok(await kubectl(["get", "wdel", SAMPLE_NAMES.delegation, "-n", NS, "-o", "json", "--show-managed-fields"]))) as {
      metadata: { managedFields: { manager: string }[] };
    };
    const managers = managed.metadata.managedFields.map((m) => m.manager);
    expect(managers).toContain("writ-controller");
    expect(managers).not.toContain("unknown");

    const rows = await db.pool.query<{ delegation_id: string; org_id: string; revoked_at: Date | null }>(
      "SELECT delegation_id, org_id, revoked_at FROM delegations ORDER BY delegation_id",
    );
    expect(rows.rows).toEqual([
      { delegation_id: "del_acme_procurement", org_id: org.org_id, revoked_at: null },
      { delegation_id: "del_acme_procurement_travel", org_id: org.org_id, revoked_at: null },
    ]);
    const agr = await db.pool.query<{ delegation_id: string; org_id: string; status: string }>("SELECT delegation_id, org_id, status FROM agreements");
    expect(agr.rows).toEqual([{ delegation_id: "del_acme_procurement", org_id: org.org_id, status: "active" }]);
    const sub = await db.pool.query<{ subscription_id: string; org_id: string; active: boolean }>("SELECT subscription_id, org_id, active FROM subscriptions");
    expect(sub.rows).toEqual([{ subscription_id: expect.stringMatching(/^sub_/), org_id: org.org_id, active: true }]);
    expect((await get("wsub", SAMPLE_NAMES.subscription)).status?.subscriptionId).toBe(sub.rows[0]?.subscription_id);

    const logged = await db.pool.query<{ sequence: string; body: string }>("SELECT sequence::text, body FROM log_entries WHERE kind = 'agreement'");
    expect(logged.rows).toHaveLength(1);
    const agreement = await get("wia", SAMPLE_NAMES.agreement);
    expect(agreement.status?.logSequence).toBe(Number(logged.rows[0]?.sequence));
    expect(JSON.parse(logged.rows[0]?.body ?? "{}")).toEqual({
      agreement_id: "agr_acme_procurement",
      delegation_id: "del_acme_procurement",
      mandate_hashes: (agreement.status as { mandateHashes?: string[] }).mandateHashes,
    });

    // A spec change that keeps the mandates: reconciled again (new observedGeneration), not logged again.
    ok(
      await kubectl([
        "patch",
        "wia",
        SAMPLE_NAMES.agreement,
        "-n",
        NS,
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { updated_at: new Date().toISOString().replace(/\.\d{3}Z$/, "Z") } }),
      ]),
    );
    const again = await until(
      "wia",
      SAMPLE_NAMES.agreement,
      (r) => r.status?.observedGeneration === r.metadata.generation && r.metadata.generation > agreement.metadata.generation,
    );
    expect(ready(again)?.status).toBe("True");
    expect(ready(again)?.lastTransitionTime).toBe(ready(agreement)?.lastTransitionTime);
    expect((await db.pool.query("SELECT 1 FROM log_entries WHERE kind = 'agreement'")).rowCount).toBe(1);
  });

  it("refuses a sub-delegation that widens its parent: Ready=False, CHAIN_SCOPE_WIDENED naming the field, nothing stored", async () => {
    const m = await sample("writ.dev_v1alpha1_delegation_chained.yaml");
    m.metadata = { name: "acme-travel-wide" } as Resource["metadata"];
    m.spec.delegation_id = "del_acme_travel_wide";
    (m.spec.scope as Record<string, unknown>).maximum_amount = 900;
    ok(await kubectl(["apply", "-n", NS, "-f", "-"], stringify(m)));
    const r = await until("wdel", "acme-travel-wide", (x) => ready(x)?.status === "False");
    expect(ready(r)).toMatchObject({ reason: "CHAIN_SCOPE_WIDENED", message: expect.stringContaining("maximum_amount") });
    expect(r.status?.phase).toBe("Invalid");
    expect(r.status?.conditions?.find((c) => c.type === "ChainValid")).toMatchObject({ status: "False", reason: "CHAIN_SCOPE_WIDENED" });
    expect((await db.pool.query("SELECT 1 FROM delegations WHERE delegation_id = 'del_acme_travel_wide'")).rowCount).toBe(0);
  });

  it("refuses an update that silently extends a stored grant, and keeps the stored record in force", async () => {
    const before = await get("wdel", SAMPLE_NAMES.chainedDelegation);
    const expires = before.spec.expires_at as string;
    const later = new Date(Date.parse(expires) + 3600_000).toISOString().replace(".000Z", "Z");
    ok(await kubectl(["patch", "wdel", SAMPLE_NAMES.chainedDelegation, "-n", NS, "--type=merge", "-p", JSON.stringify({ spec: { expires_at: later } })]));
    const r = await until("wdel", SAMPLE_NAMES.chainedDelegation, (x) => ready(x)?.status === "False");
    expect(ready(r)).toMatchObject({ reason: "SPEC_INVALID", message: expect.stringContaining("expires_at moves later") });
    expect(r.status?.conditions?.find((c) => c.type === "Stored")).toMatchObject({ status: "False", message: expect.stringContaining("stays in force") });
    const row = await db.pool.query<{ record: { expires_at: string } }>("SELECT record FROM delegations WHERE delegation_id = 'del_acme_procurement_travel'");
    expect(row.rows[0]?.record.expires_at).toBe(expires);
    ok(await kubectl(["patch", "wdel", SAMPLE_NAMES.chainedDelegation, "-n", NS, "--type=merge", "-p", JSON.stringify({ spec: { expires_at: expires } })]));
    await until("wdel", SAMPLE_NAMES.chainedDelegation, (x) => ready(x)?.status === "True");
  });

  it("a child is not Ready while its stored parent is suspended (DELEGATION_SUSPENDED), and Ready again once it is lifted", async () => {
    const patchParent = async (state: string) =>
      ok(await kubectl(["patch", "wdel", SAMPLE_NAMES.delegation, "-n", NS, "--type=merge", "-p", JSON.stringify({ spec: { state } })]));
    await patchParent("suspended");
    const parent = await until("wdel", SAMPLE_NAMES.delegation, (x) => x.status?.phase === "Suspended");
    expect(ready(parent)).toMatchObject({ status: "True" });
    const child = await until("wdel", SAMPLE_NAMES.chainedDelegation, (x) => ready(x)?.status === "False");
    expect(ready(child)).toMatchObject({
      reason: "DELEGATION_SUSPENDED",
      message: expect.stringContaining("link 1 (del_acme_procurement) above this grant is suspended"),
    });
    await patchParent("active");
    await until("wdel", SAMPLE_NAMES.chainedDelegation, (x) => ready(x)?.status === "True");
  });

  it("refuses a resource in a namespace not bound to an organization (NAMESPACE_NOT_BOUND)", async () => {
    const m = await sample("writ.dev_v1alpha1_delegation.yaml");
    m.metadata = { name: "stray" } as Resource["metadata"];
    m.spec.delegation_id = "del_stray";
    ok(await kubectl(["apply", "-n", "unbound", "-f", "-"], stringify(m)));
    const deadline = Date.now() + 30_000;
    let r: Resource;
    do {
      await delay(250);
      r = JSON.parse(ok(await kubectl(["get", "wdel", "stray", "-n", "unbound", "-o", "json"]))) as Resource;
    } while (ready(r)?.status !== "False" && Date.now() < deadline);
    expect(ready(r)).toMatchObject({ status: "False", reason: "NAMESPACE_NOT_BOUND", message: expect.stringContaining("writ.dev/org-id") });
    expect((await db.pool.query("SELECT 1 FROM delegations WHERE delegation_id = 'del_stray'")).rowCount).toBe(0);
  });

  it("recovers its informers after the API server restarts", async () => {
    await env.restartApiServer();
    const m = await sample("writ.dev_v1alpha1_delegation.yaml");
    m.metadata = { name: "after-restart" } as Resource["metadata"];
    m.spec.delegation_id = "del_after_restart";
    ok(await kubectl(["apply", "-n", NS, "-f", "-"], stringify(m)));
    const r = await until("wdel", "after-restart", (x) => ready(x)?.status === "True", 90_000);
    expect(r.status?.observedGeneration).toBe(r.metadata.generation);
    expect((controllers[0] as Controller).exited()).toBe(false); // the same process: its informers resumed
    expect((await db.pool.query("SELECT 1 FROM delegations WHERE delegation_id = 'del_after_restart'")).rowCount).toBe(1);
  });

  it("started while Postgres cannot be reached, waits and becomes ready once it can, without a restart", async () => {
    const u = new URL(db.url);
    let refused = 0;
    // Reachable again after the controller's second refused attempt (its retries back off).
    const proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port) }, { onRefused: () => ++refused === 2 && proxy.restore() });
    proxy.cut();
    const c = await startControllerProcess({
      kubeconfigPath: env.kubeconfigPath,
      databaseUrl: throughProxy(db.url, proxy),
      podName: "ctl-late",
      lease: null,
      // Nothing to reconcile here: it must not race ctl-a over the samples.
      env: { WRIT_WATCH_NAMESPACES: "writ-nothing-here" },
    });
    try {
      expect(refused).toBeGreaterThanOrEqual(2);
      expect(c.exited()).toBe(false);
      expect(c.output()).toContain("database unreachable; migrations will be retried");
      expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
    } finally {
      await c.stop();
      await proxy.close();
    }
  });

  it("elects one leader of two replicas; the standby takes over when the leader is killed", async () => {
    const lease = async () =>
      JSON.parse(ok(await kubectl(["get", "lease", LEASE, "-n", "default", "-o", "json"]))) as { spec: { holderIdentity: string; leaseTransitions?: number } };
    expect((await lease()).spec.holderIdentity).toMatch(/^ctl-a_/);
    const b = await startController(env, db, "ctl-b");
    controllers.push(b);
    const metric = async (c: Controller) =>
      (await (await fetch(`${c.url}/metrics`)).text()).match(/^leader_election_master_status\{name="writ-controller"\} (\d)/m)?.[1];
    expect(await metric(b)).toBe("0");
    expect(await metric(controllers[0] as Controller)).toBe("1");
    await delay(3000);
    expect((await lease()).spec.holderIdentity).toMatch(/^ctl-a_/);

    await (controllers[0] as Controller).stop("SIGKILL");
    const deadline = Date.now() + 40_000;
    while (!(await lease()).spec.holderIdentity.startsWith("ctl-b_")) {
      if (Date.now() > deadline) throw new Error(`ctl-b did not take over:\n${b.output().slice(-4000)}`);
      await delay(500);
    }
    expect(await metric(b)).toBe("1");
    const m = await sample("writ.dev_v1alpha1_delegation.yaml");
    m.metadata = { name: "after-failover" } as Resource["metadata"];
    m.spec.delegation_id = "del_after_failover";
    ok(await kubectl(["apply", "-n", NS, "-f", "-"], stringify(m)));
    await until("wdel", "after-failover", (x) => ready(x)?.status === "True");
  });

  it("revokes on spec.state revoked, and the sub-delegation below follows", async () => {
    ok(await kubectl(["patch", "wdel", SAMPLE_NAMES.delegation, "-n", NS, "--type=merge", "-p", '{"spec":{"state":"revoked"}}']));
    const root = await until("wdel", SAMPLE_NAMES.delegation, (r) => r.status?.phase === "Revoked" && r.status.observedGeneration === r.metadata.generation);
    expect(root.status).toMatchObject({ effectiveStatus: "revoked", revokedAt: expect.any(String) });
    expect(ready(root)?.status).toBe("True"); // revoked as declared
    const row = await db.pool.query<{ status: string; revoked_by: string }>(
      "SELECT status, revoked_by FROM delegations WHERE delegation_id = 'del_acme_procurement'",
    );
    expect(row.rows[0]).toMatchObject({ status: "revoked", revoked_by: "record" });
    const child = await until("wdel", SAMPLE_NAMES.chainedDelegation, (r) => r.status?.phase === "Revoked");
    expect(ready(child)).toMatchObject({ status: "False", reason: "CHAIN_LINK_REVOKED" });
    const agreement = await until("wia", SAMPLE_NAMES.agreement, (r) => ready(r)?.reason === "DELEGATION_REVOKED");
    expect(ready(agreement)?.status).toBe("False");

    // ONE revocation entry, in the transaction of the revocation, naming everything it revoked.
    const entries = await revocationEntries();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toEqual({
      delegation_id: "del_acme_procurement",
      ids: ["del_acme_procurement", "del_acme_procurement_travel"],
      reason: "the record's status is revoked",
      by: "principal",
      at: expect.any(String),
      source: "kubernetes",
      resource: `${NS}/${SAMPLE_NAMES.delegation}`,
    });
    // The sample Subscription follows the revoked delegation's agent: its subscribers are alerted,
    // in the same transaction, as the HTTP revocation paths do.
    const alerts = async () =>
      (await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_outbox WHERE payload->>'type' = 'revocation'")).rows[0]?.n ?? 0;
    const alerted = await alerts();
    expect(alerted).toBeGreaterThanOrEqual(1);
    // A later spec change (reconciled, still revoked) and the children's reconciles log nothing more.
    ok(
      await kubectl([
        "patch",
        "wdel",
        SAMPLE_NAMES.delegation,
        "-n",
        NS,
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { purpose: "Withdrawn: was office supplies and business travel for Acme Corp." } }),
      ]),
    );
    await until(
      "wdel",
      SAMPLE_NAMES.delegation,
      (r) => r.status?.observedGeneration === r.metadata.generation && r.metadata.generation > root.metadata.generation,
    );
    await delay(1000);
    expect(await revocationEntries()).toHaveLength(1);
    expect(await alerts()).toBe(alerted);
  });

  it("deleting a resource revokes its record through the finalizer and keeps the row", async () => {
    ok(await kubectl(["delete", "wdel", "after-restart", "-n", NS, "--timeout=60s"]));
    const r = await db.pool.query<{ status: string; revoked_by: string; revoked_reason: string }>(
      "SELECT status, revoked_by, revoked_reason FROM delegations WHERE delegation_id = 'del_after_restart'",
    );
    expect(r.rows[0]).toMatchObject({ status: "revoked", revoked_by: "controller", revoked_reason: expect.stringContaining("deleted") });
    const mine = (await revocationEntries()).filter((b) => b.delegation_id === "del_after_restart");
    expect(mine).toEqual([
      {
        delegation_id: "del_after_restart",
        ids: ["del_after_restart"],
        reason: `the Delegation ${NS}/after-restart was deleted`,
        by: "policy",
        at: expect.any(String),
        source: "kubernetes",
        resource: `${NS}/after-restart`,
      },
    ]);

    // The agreement: deletion revokes it and logs ONE entry with its mandate hashes.
    const agreement = await get("wia", SAMPLE_NAMES.agreement);
    ok(await kubectl(["delete", "wia", SAMPLE_NAMES.agreement, "-n", NS, "--timeout=60s"]));
    const agr = (await revocationEntries()).filter((b) => b.agreement_id === "agr_acme_procurement");
    expect(agr).toEqual([
      {
        agreement_id: "agr_acme_procurement",
        ids: ["agr_acme_procurement"],
        reason: `the IntentAgreement ${NS}/${SAMPLE_NAMES.agreement} was deleted`,
        by: "policy",
        at: expect.any(String),
        mandate_hashes: (agreement.status as { mandateHashes?: string[] }).mandateHashes,
        source: "kubernetes",
        resource: `${NS}/${SAMPLE_NAMES.agreement}`,
      },
    ]);

    // Re-applying the deleted Delegation (the same delegation_id, already revoked) logs nothing.
    const count = (await revocationEntries()).length;
    const m = await sample("writ.dev_v1alpha1_delegation.yaml");
    m.metadata = { name: "after-restart" } as Resource["metadata"];
    m.spec.delegation_id = "del_after_restart";
    ok(await kubectl(["apply", "-n", NS, "-f", "-"], stringify(m)));
    await until("wdel", "after-restart", (x) => x.status?.phase === "Revoked" && x.status.observedGeneration === x.metadata.generation);
    expect(await revocationEntries()).toHaveLength(count);
    ok(await kubectl(["delete", "wsub", SAMPLE_NAMES.subscription, "-n", NS, "--timeout=60s"]));
    const s = await db.pool.query<{ active: boolean }>("SELECT active FROM subscriptions");
    expect(s.rows).toEqual([{ active: false }]);
  });
});
