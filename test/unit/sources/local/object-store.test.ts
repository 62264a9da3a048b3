/**
 * The local API server's object store: the API server's bookkeeping (resourceVersion,
 * generation only on spec changes, status subresource, optimistic concurrency, graceful
 * deletion with finalizers), CRD defaults, and resumable watches (410 beyond the history).
 */
import { describe, expect, it } from "vitest";
import { isKubeError } from "../../../../src/sources/kubernetes/errors.js";
import type { KubeObject } from "../../../../src/sources/kubernetes/objects.js";
import { LocalObjectStore } from "../../../../src/sources/local/object-store.js";

const JSON_PATCH = "application/json-patch+json";
const MERGE = "application/merge-patch+json";

function subscription(name: string, agentId = "agent_a"): KubeObject {
  return {
    apiVersion: "writ.dev/v1alpha1",
    kind: "Subscription",
    metadata: { name, namespace: "ns", labels: { app: "x" } },
    spec: { agentId, webhookUrl: "https://hooks.example.com/a" },
  };
}

describe("LocalObjectStore", () => {
  it("creates with generation 1 and bumps the generation only when the spec changes", () => {
    const s = new LocalObjectStore({ now: () => Date.parse("2026-11-21T10:00:00.123Z") });
    expect(s.apply("subscriptions", subscription("a"))).toBe("created");
    const created = s.get("subscriptions", "ns", "a");
    expect(created?.metadata).toMatchObject({ generation: 1, resourceVersion: "1", creationTimestamp: "2026-11-21T10:00:00Z", uid: expect.any(String) });
    expect(created?.kind).toBe("Subscription");
    expect(s.apply("subscriptions", subscription("a"))).toBe("unchanged");
    expect(s.apply("subscriptions", { ...subscription("a"), metadata: { name: "a", namespace: "ns", labels: { app: "y" } } })).toBe("configured");
    expect(s.get("subscriptions", "ns", "a")?.metadata).toMatchObject({ generation: 1, resourceVersion: "2", labels: { app: "y" } });
    expect(s.apply("subscriptions", subscription("a", "agent_b"))).toBe("configured");
    expect(s.get("subscriptions", "ns", "a")?.metadata).toMatchObject({ generation: 2, resourceVersion: "3" });
  });

  it("writes .status only through the status subresource, without a generation bump", () => {
    const hooks: string[] = [];
    const s = new LocalObjectStore({ hooks: { onStatus: (p, o) => hooks.push(`${p}/${o.metadata.name}`) } });
    s.apply("subscriptions", subscription("a"));
    s.patch("subscriptions", "ns", "a", [{ op: "add", path: "/status", value: { phase: "Ready" } }], JSON_PATCH, "status");
    s.patch("subscriptions", "ns", "a", { status: { phase: "Ignored" }, metadata: { annotations: { "writ.dev/record-id": "sub_1" } } }, MERGE);
    const o = s.get("subscriptions", "ns", "a");
    expect(o?.status).toEqual({ phase: "Ready" });
    expect(o?.metadata).toMatchObject({ generation: 1, annotations: { "writ.dev/record-id": "sub_1" } });
    expect(hooks).toEqual(["subscriptions/a"]);
    // An annotation added by the controller survives a later apply of the file.
    s.apply("subscriptions", subscription("a"));
    expect(s.get("subscriptions", "ns", "a")?.metadata.annotations).toEqual({ "writ.dev/record-id": "sub_1" });
  });

  it("refuses a patch carrying a stale resourceVersion with CONFLICT", () => {
    const s = new LocalObjectStore();
    s.apply("subscriptions", subscription("a"));
    const read = s.get("subscriptions", "ns", "a");
    s.apply("subscriptions", subscription("a", "agent_b"));
    let err: unknown;
    try {
      s.patch("subscriptions", "ns", "a", { metadata: { finalizers: ["writ.dev/revoke"], resourceVersion: read?.metadata.resourceVersion } }, MERGE);
    } catch (e) {
      err = e;
    }
    expect(isKubeError(err, "CONFLICT")).toBe(true);
    expect(() => s.patch("subscriptions", "ns", "missing", {}, MERGE)).toThrow(/not found/);
  });

  it("deletes gracefully: a finalizer holds the object until it is removed", () => {
    const removed: string[] = [];
    const s = new LocalObjectStore({ hooks: { onRemoved: (_p, o) => removed.push(o.metadata.name) } });
    s.apply("subscriptions", subscription("a"));
    s.patch("subscriptions", "ns", "a", { metadata: { finalizers: ["writ.dev/revoke"] } }, MERGE);
    expect(s.delete("subscriptions", "ns", "a")).toBe("deleting");
    expect(s.get("subscriptions", "ns", "a")?.metadata.deletionTimestamp).toEqual(expect.any(String));
    s.patch("subscriptions", "ns", "a", { metadata: { finalizers: [] } }, MERGE);
    expect(s.get("subscriptions", "ns", "a")).toBeUndefined();
    s.apply("subscriptions", subscription("b"));
    expect(s.delete("subscriptions", "ns", "b")).toBe("deleted");
    expect(removed).toEqual(["a", "b"]);
  });

  it("fills in the CRD's defaults (spec.state active, empty lists, revocable)", () => {
    const s = new LocalObjectStore();
    s.apply("delegations", {
      apiVersion: "writ.dev/v1alpha1",
      kind: "Delegation",
      metadata: { name: "d", namespace: "ns" },
      spec: { delegation_id: "del_1", scope: { currency: "EUR" } },
    });
    expect(s.get("delegations", "ns", "d")?.spec).toMatchObject({
      delegation_id: "del_1",
      state: "active",
      conditions: [],
      delegation_chain: [],
      revocable: true,
    });
  });

  it("streams changes in order, resumes from a resourceVersion, and answers gone beyond its history", () => {
    const s = new LocalObjectStore({ historySize: 3 });
    const seen: string[] = [];
    const sub = s.subscribe("subscriptions", "ns", undefined, (type, o) => seen.push(`${type} ${o.metadata.name} ${o.metadata.resourceVersion}`));
    if (sub === "gone") throw new Error("gone");
    s.apply("subscriptions", subscription("a"));
    s.apply("delegations", { apiVersion: "writ.dev/v1alpha1", kind: "Delegation", metadata: { name: "other", namespace: "ns" }, spec: {} });
    s.apply("subscriptions", subscription("a", "agent_b"));
    s.delete("subscriptions", "ns", "a");
    sub.close();
    s.apply("subscriptions", subscription("c"));
    expect(seen).toEqual(["ADDED a 1", "MODIFIED a 3", "DELETED a 4"]);
    const replay: string[] = [];
    const again = s.subscribe("subscriptions", undefined, "3", (type, o) => replay.push(`${type} ${o.metadata.name}`));
    expect(again).not.toBe("gone");
    expect(replay).toEqual(["DELETED a", "ADDED c"]);
    expect(s.subscribe("subscriptions", undefined, "1", () => {})).toBe("gone");
  });

  it("restores a snapshot", () => {
    const s = new LocalObjectStore();
    s.apply("subscriptions", subscription("a"));
    const copy = new LocalObjectStore({ initial: s.snapshot() });
    expect(copy.get("subscriptions", "ns", "a")).toEqual(s.get("subscriptions", "ns", "a"));
    expect(copy.resourceVersion()).toBe("1");
  });
});
