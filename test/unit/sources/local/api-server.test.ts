/**
 * The local API server as the supervised informer and the controller's writes see it: list +
 * watch through `startInformer`, the status subresource path, namespaces with their labels,
 * Events handed out, 404 for anything else, 410 for a watch too far behind.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isKubeError } from "../../../../src/sources/kubernetes/errors.js";
import { startInformer, type Informer } from "../../../../src/sources/kubernetes/informer.js";
import type { KubeObject } from "../../../../src/sources/kubernetes/objects.js";
import { LocalApiServer, type PostedEvent } from "../../../../src/sources/local/api-server.js";
import { LocalObjectStore } from "../../../../src/sources/local/object-store.js";

const PATH = "/apis/writ.dev/v1alpha1/namespaces/ns/subscriptions";

function subscription(name: string, agentId = "agent_a"): KubeObject {
  return {
    apiVersion: "writ.dev/v1alpha1",
    kind: "Subscription",
    metadata: { name, namespace: "ns" },
    spec: { agentId, webhookUrl: "https://hooks.example.com/a" },
  };
}

describe("LocalApiServer", () => {
  let informer: Informer | undefined;
  afterEach(async () => {
    await informer?.stop();
    informer = undefined;
  });

  it("feeds a supervised informer: the first list, then every change in order", async () => {
    const store = new LocalObjectStore();
    const api = new LocalApiServer({ store, namespaceLabels: () => ({}) });
    store.apply("subscriptions", subscription("a"));
    const events: string[] = [];
    informer = startInformer({
      client: api,
      group: "writ.dev",
      version: "v1alpha1",
      plural: "subscriptions",
      onEvent: (t, o) => events.push(`${t} ${o.metadata.name}`),
    });
    await informer.synced;
    store.apply("subscriptions", subscription("b"));
    await api.request("PATCH", `${PATH}/a/status`, {
      body: [{ op: "add", path: "/status", value: { phase: "Ready" } }],
      contentType: "application/json-patch+json",
    });
    await api.request("DELETE", `${PATH}/b`);
    await expect.poll(() => events, { timeout: 2000, interval: 10 }).toEqual(["added a", "added b", "modified a", "deleted b"]);
    expect(informer.get("a", "ns")?.status).toEqual({ phase: "Ready" });
    expect(informer.healthy()).toBe(true);
  });

  it("serves objects, namespaces with their labels, events and the version; 404 for anything else", async () => {
    const store = new LocalObjectStore();
    const posted: PostedEvent[] = [];
    const api = new LocalApiServer({ store, namespaceLabels: (ns) => ({ "writ.dev/org-id": `org_for_${ns}` }), onEvent: (e) => posted.push(e) });
    await api.request("POST", PATH, { body: subscription("a") });
    expect((await api.request<KubeObject>("GET", `${PATH}/a`)).metadata.generation).toBe(1);
    const list = await api.request<{ items: KubeObject[]; metadata: { resourceVersion: string } }>("GET", "/apis/writ.dev/v1alpha1/subscriptions", {
      query: { limit: 500 },
    });
    expect(list.items.map((o) => o.metadata.name)).toEqual(["a"]);
    expect(list.metadata.resourceVersion).toBe("1");
    expect((await api.request<KubeObject>("GET", "/api/v1/namespaces/team")).metadata.labels).toEqual({ "writ.dev/org-id": "org_for_team" });
    await api.request("POST", "/api/v1/namespaces/ns/events", {
      body: { reason: "Revoked", type: "Normal", message: "gone", involvedObject: { kind: "Subscription", name: "a" } },
    });
    expect(posted).toEqual([{ namespace: "ns", reason: "Revoked", type: "Normal", message: "gone", involvedObject: { kind: "Subscription", name: "a" } }]);
    expect(await api.request("GET", "/version")).toMatchObject({ gitVersion: "writ-local" });
    for (const path of [
      `${PATH}/missing`,
      "/apis/coordination.k8s.io/v1/namespaces/ns/leases/x",
      "/apis/writ.dev/v1alpha1/namespaces/ns/widgets",
      `${PATH}/a/scale`,
    ]) {
      const err = await api.request("GET", path).catch((e: unknown) => e);
      expect(isKubeError(err, "NOT_FOUND"), path).toBe(true);
    }
  });

  it("answers a watch from a resourceVersion older than its history with 410 Gone", async () => {
    const store = new LocalObjectStore({ historySize: 1 });
    const api = new LocalApiServer({ store, namespaceLabels: () => ({}) });
    store.apply("subscriptions", subscription("a"));
    store.apply("subscriptions", subscription("a", "agent_b"));
    store.apply("subscriptions", subscription("a", "agent_c"));
    const got: [string, unknown][] = [];
    await api.watch(
      PATH,
      { resourceVersion: "1" },
      (t, o) => got.push([t, o]),
      () => {},
    );
    await expect.poll(() => got.length, { timeout: 1000, interval: 5 }).toBe(1);
    expect(got[0]).toEqual(["ERROR", expect.objectContaining({ code: 410 })]);
  });
});
