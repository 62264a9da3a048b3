/**
 * Applying a folder to the store: apply + prune semantics, a broken file keeps what it declared,
 * a duplicate is reported, and a deletion is confirmed by a second read (a file caught
 * mid-save is not taken for a deletion).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FileScan, ManifestObject } from "../../../../src/sources/local/manifests.js";
import { LocalObjectStore } from "../../../../src/sources/local/object-store.js";
import { ManifestSync } from "../../../../src/sources/local/sync.js";

function sub(file: string, name: string, agentId = "agent_a"): ManifestObject {
  return {
    file,
    plural: "subscriptions",
    object: {
      apiVersion: "writ.dev/v1alpha1",
      kind: "Subscription",
      metadata: { name, namespace: "default" },
      spec: { agentId, webhookUrl: "https://hooks.example.com/a" },
    },
  };
}
const ok = (file: string, ...objects: ManifestObject[]): FileScan => ({ file, ok: true, objects, notes: [] });
const broken = (file: string): FileScan => ({ file, ok: false, problem: "YAML error at line 1: x" });

/** A sync whose folder reads come from `reads` in turn (the last one repeats). */
function syncWith(store: LocalObjectStore, reads: FileScan[][]) {
  let i = 0;
  const applied: string[][] = [];
  const sync = new ManifestSync({
    dir: "/d",
    store,
    confirmMs: 1,
    scan: async () => reads[Math.min(i++, reads.length - 1)] as FileScan[],
    beforeApply: async (objects) => void applied.push(objects.map((o) => o.object.metadata.name)),
  });
  return { sync, applied, setReads: (r: FileScan[][]) => ((reads = r), (i = 0)) };
}

describe("ManifestSync", () => {
  it("applies, updates and prunes like kubectl apply --prune", async () => {
    const store = new LocalObjectStore();
    const s = syncWith(store, [[ok("/d/1.yaml", sub("/d/1.yaml", "a"), sub("/d/1.yaml", "b"))]]);
    const first = await s.sync.run();
    expect([first.created, first.configured, first.deleted]).toEqual([["subscriptions/default/a", "subscriptions/default/b"], [], []]);
    expect(s.applied).toEqual([["a", "b"]]);
    s.setReads([[ok("/d/1.yaml", sub("/d/1.yaml", "a", "agent_z"))]]);
    const second = await s.sync.run();
    expect([second.created, second.configured, second.deleted]).toEqual([[], ["subscriptions/default/a"], ["subscriptions/default/b"]]);
    expect(store.get("subscriptions", "default", "a")?.metadata.generation).toBe(2);
    expect(store.get("subscriptions", "default", "b")).toBeUndefined();
  });

  it("never prunes what another folder declared (WRIT_MANIFESTS_DIR switched): kept and listed", async () => {
    const store = new LocalObjectStore();
    store.apply("subscriptions", sub("/old/x.yaml", "old").object);
    const sync = new ManifestSync({
      dir: "/d",
      store,
      confirmMs: 1,
      sources: [["subscriptions/default/old", "/old/x.yaml"]],
      scan: async () => [ok("/d/1.yaml", sub("/d/1.yaml", "a"))],
    });
    const r = await sync.run();
    expect(r.deleted).toEqual([]);
    expect(r.elsewhere).toEqual([{ key: "subscriptions/default/old", file: "/old/x.yaml" }]);
    expect(store.get("subscriptions", "default", "old")?.metadata.deletionTimestamp).toBeUndefined();
    // Declared again here, it belongs to this folder from then on, and is pruned like any other.
    const adopt = new ManifestSync({
      dir: "/d",
      store,
      confirmMs: 1,
      sources: sync.sources(),
      scan: async () => [ok("/d/1.yaml", sub("/d/1.yaml", "a"), sub("/d/1.yaml", "old"))],
    });
    expect((await adopt.run()).elsewhere).toEqual([]);
  });

  it("keeps what a broken file declared and reports it", async () => {
    const store = new LocalObjectStore();
    const s = syncWith(store, [[ok("/d/1.yaml", sub("/d/1.yaml", "a")), ok("/d/2.yaml", sub("/d/2.yaml", "b"))]]);
    await s.sync.run();
    s.setReads([[ok("/d/1.yaml", sub("/d/1.yaml", "a")), broken("/d/2.yaml")]]);
    const r = await s.sync.run();
    expect(r.deleted).toEqual([]);
    expect(r.problems).toEqual(["/d/2.yaml: YAML error at line 1: x; what it declared before is kept"]);
    expect(store.get("subscriptions", "default", "b")).toBeDefined();
  });

  it("keeps what a file declared while the file is empty (an editor saving it), and deletes it once the file is removed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-sync-"));
    try {
      const file = join(dir, "sub.yaml");
      await writeFile(
        file,
        "apiVersion: writ.dev/v1alpha1\nkind: Subscription\nmetadata:\n  name: a\nspec:\n  agentId: agent_a\n  webhookUrl: https://hooks.example.com/a\n",
      );
      const store = new LocalObjectStore();
      const sync = new ManifestSync({ dir, store, confirmMs: 1 });
      expect((await sync.run()).created).toEqual(["subscriptions/default/a"]);
      await writeFile(file, ""); // truncated, the new text not written yet (and still so at the confirming read)
      const held = await sync.run();
      expect(held.deleted).toEqual([]);
      expect(held.problems).toEqual([
        `${file}: the file is empty (being saved?); to withdraw what it declared, delete the file; what it declared before is kept`,
      ]);
      expect(store.get("subscriptions", "default", "a")).toBeDefined();
      await rm(file);
      expect((await sync.run()).deleted).toEqual(["subscriptions/default/a"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("applies a resource declared twice from the first file and reports the other", async () => {
    const store = new LocalObjectStore();
    const s = syncWith(store, [[ok("/d/1.yaml", sub("/d/1.yaml", "a")), ok("/d/2.yaml", sub("/d/2.yaml", "a", "agent_other"))]]);
    const r = await s.sync.run();
    expect(r.problems).toEqual([expect.stringContaining("/d/2.yaml: Subscription default/a is also declared in /d/1.yaml")]);
    expect(store.get("subscriptions", "default", "a")?.spec).toMatchObject({ agentId: "agent_a" });
  });

  it("does not delete what a second read finds again", async () => {
    const store = new LocalObjectStore();
    const full = [ok("/d/1.yaml", sub("/d/1.yaml", "a"))];
    const s = syncWith(store, [full]);
    await s.sync.run();
    s.setReads([[ok("/d/1.yaml")], full]); // caught empty mid-save, complete again on the confirming read
    expect((await s.sync.run()).deleted).toEqual([]);
    expect(store.get("subscriptions", "default", "a")).toBeDefined();
  });

  it("deletes gracefully: a resource with a finalizer is only marked, once", async () => {
    const store = new LocalObjectStore();
    const s = syncWith(store, [[ok("/d/1.yaml", sub("/d/1.yaml", "a"))]]);
    await s.sync.run();
    store.patch("subscriptions", "default", "a", { metadata: { finalizers: ["writ.dev/revoke"] } }, "application/merge-patch+json");
    s.setReads([[]]);
    expect((await s.sync.run()).deleted).toEqual(["subscriptions/default/a"]);
    expect(store.get("subscriptions", "default", "a")?.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect((await s.sync.run()).deleted).toEqual([]);
  });
});
