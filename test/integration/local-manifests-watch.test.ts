/**
 * The data plane's Kubernetes revocation watch (src/verify/kube-watch.ts) over the local API
 * server (src/sources/local) and a real Postgres, without envtest: `spec.state: revoked`, a
 * revoked IntentAgreement and a deletion through the finalizer mark the index at once (Postgres
 * untouched) with the lag observed; a revocation declared in another organization's namespace,
 * or by a resource that does not own the record (its record-id annotation repointed), is ignored; a resource already revoked at the first list is marked without a lag sample; a
 * severed connection and a silently dead one (the probe fails while the watch claims to watch)
 * make the index stale after WRIT_WATCH_STALE_MS, and both recover by themselves, the latter
 * catching up on what the dead watch missed.
 */
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agreementResource,
  claimAsOwner,
  createOperator,
  delegationResource,
  storeGrants,
  type Grant,
  type Operator,
} from "../../hack/bench/propagation/world.js";
import type { KubeTransport, RequestOptions, WatchHandle } from "../../src/sources/kubernetes/client.js";
import { KubeApiError } from "../../src/sources/kubernetes/errors.js";
import type { KubeObject } from "../../src/sources/kubernetes/objects.js";
import { LocalApiServer } from "../../src/sources/local/api-server.js";
import { LocalObjectStore } from "../../src/sources/local/object-store.js";
import { WatchedRevocationIndex } from "../../src/verify/revocation/kube-watch-index.js";
import { KubeRevocationWatch } from "../../src/verify/revocation/kube-watch.js";
import { RevocationChannel } from "../../src/store/revocation/channel.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

const STALE_MS = 400;
const MERGE = "application/merge-patch+json";

/** A transport that can be severed (connections reset) or blackholed (no answers, watches silently dead). */
class Network implements KubeTransport {
  severed = false;
  blackholed = false;
  private open = new Set<{ handle: WatchHandle; onDone: (err: unknown) => void }>();

  constructor(private readonly inner: KubeTransport) {}

  async request<T>(method: string, path: string, opts?: RequestOptions): Promise<T> {
    if (this.severed) throw new KubeApiError("UNAVAILABLE", 0, `${method} ${path}: connect ECONNREFUSED`);
    if (this.blackholed) {
      await new Promise((r) => setTimeout(r, opts?.timeoutMs ?? 1000));
      throw new KubeApiError("UNAVAILABLE", 0, `${method} ${path}: no answer`);
    }
    return this.inner.request<T>(method, path, opts);
  }

  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (t: string, o: unknown) => void,
    onDone: (err: unknown) => void,
  ): Promise<WatchHandle> {
    if (this.severed) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const handle = await this.inner.watch(path, query, (t, o) => !this.blackholed && onEvent(t, o), onDone);
    const entry = { handle, onDone };
    this.open.add(entry);
    return { abort: () => (this.open.delete(entry), handle.abort()) };
  }

  sever(): void {
    this.severed = true;
    for (const w of this.open) {
      w.handle.abort();
      w.onDone(new Error("connection reset"));
    }
    this.open.clear();
  }
}

describe("the Kubernetes revocation watch over the local API server", () => {
  let db: TestDatabase;
  let acme: Operator;
  let other: Operator;
  let grants: Grant[];
  let store: LocalObjectStore;
  let net: Network;
  let index: WatchedRevocationIndex;
  let watch: KubeRevocationWatch;
  const registry = new Registry();
  const logs: string[] = [];
  const g = (i: number) => grants[i] as Grant;
  const put = (plural: string, namespace: string, obj: Record<string, unknown>) =>
    store.apply(plural, { ...(obj as unknown as KubeObject), metadata: { ...(obj as unknown as KubeObject).metadata, namespace } });
  const lagCount = async () =>
    (await registry.getSingleMetricAsString("writ_revocation_lag_seconds"))
      .split("\n")
      .filter((l) => l.startsWith("writ_revocation_lag_seconds_count"))
      .map((l) => l.replace(/^\S+\{/, "{"));
  const revokedInPostgres = async (id: string) =>
    (await db.pool.query<{ revoked_at: Date | null }>("SELECT revoked_at FROM delegations WHERE delegation_id = $1", [id])).rows[0]?.revoked_at !== null;

  beforeAll(async () => {
    db = await createTestDatabase();
    acme = await createOperator(db.pool, "Acme Corp");
    other = await createOperator(db.pool, "Other Corp");
    grants = await storeGrants(db.pool, acme.orgId, "lw", 8);
    store = new LocalObjectStore();
    const orgs: Record<string, string> = { acme: acme.orgId, other: other.orgId };
    net = new Network(
      new LocalApiServer({
        store,
        namespaceLabels: (ns): Record<string, string> => {
          const org = orgs[ns];
          return org ? { "writ.dev/org-id": org } : {};
        },
      }),
    );
    for (let i = 0; i < 7; i++) put("delegations", "acme", delegationResource(g(i), { stored: i === 2 }));
    put("intentagreements", "acme", agreementResource(g(1)));
    // Revoked before the watch starts: marked at the first list, without a lag sample.
    put("delegations", "acme", { ...delegationResource(g(7)), spec: { ...(delegationResource(g(7)).spec as object), state: "revoked" } });
    // The controller stored each record through its resource: the resource owns it.
    for (let i = 0; i < 8; i++) await claimAsOwner(db.pool, "delegation", g(i).delegationId, store.get("delegations", "acme", g(i).name) as KubeObject);
    await claimAsOwner(db.pool, "agreement", g(1).agreementId, store.get("intentagreements", "acme", `${g(1).name}-agreement`) as KubeObject);
    index = new WatchedRevocationIndex({ db: db.pool, source: new RevocationChannel({ connection: db.url }) });
    await index.start();
    watch = new KubeRevocationWatch({
      client: net,
      index,
      db: db.pool,
      namespaces: [],
      staleMs: STALE_MS,
      registry,
      probeIntervalMs: 50,
      backoff: { initialMs: 50, maxMs: 200 },
      log: { info: (_f, m) => logs.push(m), warn: (f, m) => logs.push(`${m} ${JSON.stringify(f)}`) },
    });
    index.attachWatch(watch);
    expect(index.stale()).toBe(true); // nothing listed yet
    watch.start();
    await watch.synced();
    for (let i = 0; index.stale() && i < 250; i++) await new Promise((r) => setTimeout(r, 20));
    expect(index.stale()).toBe(false);
  });

  afterAll(async () => {
    await watch?.stop();
    await index?.stop();
    await db?.drop();
  });

  it("marks a Delegation revoked on `spec.state: revoked`, before Postgres knows, with its lag", async () => {
    expect(index.isDelegationRevoked(acme.orgId, g(7).delegationId)).toBe(true);
    expect(await lagCount()).toEqual([]);
    const at = new Date(Date.now() - 30).toISOString();
    store.patch("delegations", "acme", g(0).name, { metadata: { annotations: { "writ.dev/revoked-at": at } }, spec: { state: "revoked" } }, MERGE);
    await expect.poll(() => index.isDelegationRevoked(acme.orgId, g(0).delegationId), { timeout: 2000, interval: 5 }).toBe(true);
    expect(await revokedInPostgres(g(0).delegationId)).toBe(false);
    expect(await lagCount()).toEqual(['{source="kubernetes",kind="delegation"} 1']);
    const sum = (await registry.getSingleMetricAsString("writ_revocation_lag_seconds"))
      .split("\n")
      .find((l) => l.startsWith("writ_revocation_lag_seconds_sum"));
    expect(Number(sum?.split(" ")[1])).toBeGreaterThanOrEqual(0.03);
  });

  it("marks an agreement revoked by its IntentAgreement, and a Delegation deleted through the finalizer", async () => {
    store.patch("intentagreements", "acme", `${g(1).name}-agreement`, { spec: { state: "revoked" } }, MERGE);
    store.delete("delegations", "acme", g(2).name);
    await expect
      .poll(() => [index.isAgreementRevoked(acme.orgId, g(1).agreementId), index.isDelegationRevoked(acme.orgId, g(2).delegationId)], {
        timeout: 2000,
        interval: 5,
      })
      .toEqual([true, true]);
    expect(index.isDelegationRevoked(acme.orgId, g(1).delegationId)).toBe(false);
  });

  it("ignores a revocation declared in a namespace of another organization, or an unbound one", async () => {
    const forged = { ...delegationResource(g(3), { stored: true }), spec: { ...(delegationResource(g(3)).spec as object), state: "revoked" } };
    put("delegations", "other", forged);
    put("delegations", "unbound", forged);
    await expect.poll(() => logs.filter((l) => l.includes("not stored for its namespace's organization")).length, { timeout: 2000, interval: 10 }).toBe(2);
    expect(index.isDelegationRevoked(acme.orgId, g(3).delegationId)).toBe(false);
  });

  it("ignores the deletion of a resource of the same organization whose record-id annotation names a record it does not own", async () => {
    const thief = {
      ...delegationResource({ ...g(3), name: "thief" }),
      metadata: { name: "thief", finalizers: ["writ.dev/revoke"], annotations: { "writ.dev/record-id": g(3).delegationId } },
    };
    put("delegations", "acme", thief);
    store.delete("delegations", "acme", "thief");
    await expect
      .poll(() => logs.filter((l) => l.includes("not owned by this resource") && l.includes('"resource":"acme/thief"')).length, { timeout: 2000, interval: 10 })
      .toBe(1);
    expect(index.isDelegationRevoked(acme.orgId, g(3).delegationId)).toBe(false);
  });

  it("is stale while the connection is severed longer than the bound, and recovers by itself", async () => {
    net.sever();
    expect(index.stale()).toBe(false);
    await expect.poll(() => index.stale(), { timeout: 3000, interval: 20 }).toBe(true);
    expect(index.staleReason()).toMatch(/Kubernetes watch of revocations has been down for \d+ ms \(bound WRIT_WATCH_STALE_MS=400\)/);
    expect(await registry.getSingleMetricAsString("writ_kube_watch_up")).toMatch(/writ_kube_watch_up 0/);
    // A revocation made meanwhile arrives once the watch is back.
    store.patch("delegations", "acme", g(4).name, { spec: { state: "revoked" } }, MERGE);
    net.severed = false;
    await expect.poll(() => index.stale(), { timeout: 5000, interval: 20 }).toBe(false);
    await expect.poll(() => index.isDelegationRevoked(acme.orgId, g(4).delegationId), { timeout: 2000, interval: 10 }).toBe(true);
    expect(index.staleReason()).toBeUndefined();
  });

  it("is stale while the API server does not answer although the watch claims to watch, then restarts the watch", async () => {
    net.blackholed = true;
    store.patch("delegations", "acme", g(5).name, { spec: { state: "revoked" } }, MERGE); // lost by the dead watch
    await expect.poll(() => index.stale(), { timeout: 3000, interval: 20 }).toBe(true);
    net.blackholed = false;
    await expect.poll(() => index.stale(), { timeout: 5000, interval: 20 }).toBe(false);
    await expect.poll(() => index.isDelegationRevoked(acme.orgId, g(5).delegationId), { timeout: 3000, interval: 10 }).toBe(true);
    expect(logs).toContain("restarting a watch after the API server was unreachable");
    expect(index.isDelegationRevoked(acme.orgId, g(6).delegationId)).toBe(false);
  });
});
