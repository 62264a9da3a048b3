/**
 * The supervised informer against a scripted transport: list then watch with bookmarks, events
 * into the cache, relist on 410 (as an HTTP status and as an ERROR event), resume (no relist)
 * after other failures with backoff, the silence watchdog, throwing callbacks, resync, stop.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KubeTransport, RequestOptions, WatchHandle } from "../../../../src/sources/kubernetes/client.js";
import { startInformer, type Informer, type InformerEventType } from "../../../../src/sources/kubernetes/informer.js";
import type { KubeObject } from "../../../../src/sources/kubernetes/objects.js";

interface OpenWatch {
  query: Record<string, unknown>;
  onEvent: (type: string, obj: unknown) => void;
  onDone: (err: unknown) => void;
  aborted: boolean;
}

/** A transport whose lists answer from `objects` and whose watches the test drives. */
class ScriptedApi implements KubeTransport {
  objects = new Map<string, KubeObject>();
  rv = 10;
  lists = 0;
  failLists = 0;
  watches: OpenWatch[] = [];
  failWatchWith: unknown[] = [];

  put(name: string, extra: Record<string, unknown> = {}): KubeObject {
    this.rv += 1;
    const o: KubeObject = { metadata: { name, namespace: "ns", resourceVersion: String(this.rv) }, ...extra };
    this.objects.set(name, o);
    return o;
  }

  async request<T>(method: string, path: string, opts?: RequestOptions): Promise<T> {
    expect(method).toBe("GET");
    expect(path).toBe("/apis/writ.dev/v1alpha1/delegations");
    expect(opts?.query?.limit).toBe(500);
    this.lists += 1;
    if (this.failLists > 0) {
      this.failLists -= 1;
      throw new Error("list failed");
    }
    return { metadata: { resourceVersion: String(this.rv) }, items: [...this.objects.values()] } as T;
  }

  async watch(
    _path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: OpenWatch["onEvent"],
    onDone: OpenWatch["onDone"],
  ): Promise<WatchHandle> {
    const failure = this.failWatchWith.shift();
    if (failure !== undefined) {
      onDone(failure);
      return { abort() {} };
    }
    const w: OpenWatch = { query, onEvent, onDone, aborted: false };
    this.watches.push(w);
    return { abort: () => (w.aborted = true) };
  }

  get current(): OpenWatch {
    const w = this.watches.at(-1);
    if (!w) throw new Error("no watch");
    return w;
  }
}

const fast = { backoff: { initialMs: 5, maxMs: 20 }, resyncMs: 0 };
const events: [InformerEventType, string, string | undefined][] = [];
let informer: Informer | undefined;

function start(api: ScriptedApi, extra: Partial<Parameters<typeof startInformer>[0]> = {}, errors: string[] = []): Informer {
  informer = startInformer({
    client: api,
    group: "writ.dev",
    version: "v1alpha1",
    plural: "delegations",
    ...fast,
    onEvent: (type, obj, old) => events.push([type, obj.metadata.name, old?.metadata.resourceVersion]),
    onError: (err, ctx) => errors.push(`${ctx}: ${err instanceof Error ? err.message : String(err)}`),
    ...extra,
  });
  return informer;
}

afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  events.length = 0;
});

describe("startInformer", () => {
  it("lists, then watches from the list's resourceVersion with bookmarks and a 5-10 minute server timeout", async () => {
    const api = new ScriptedApi();
    api.put("a");
    const inf = start(api);
    await inf.synced;
    expect(inf.hasSynced()).toBe(true);
    expect(events).toEqual([["added", "a", undefined]]);
    await vi.waitFor(() => expect(api.watches).toHaveLength(1));
    expect(api.current.query).toMatchObject({ resourceVersion: "11", allowWatchBookmarks: true });
    expect(api.current.query.timeoutSeconds).toBeGreaterThanOrEqual(300);
    expect(api.current.query.timeoutSeconds).toBeLessThanOrEqual(600);
    await vi.waitFor(() => expect(inf.healthy()).toBe(true));
    expect(inf.state()).toBe("watching");
    expect(inf.disconnectedSince()).toBeUndefined();
  });

  it("applies watch events to its cache and delivers them, with the previous object on update", async () => {
    const api = new ScriptedApi();
    const a = api.put("a");
    const inf = start(api);
    await inf.synced;
    await vi.waitFor(() => expect(api.watches).toHaveLength(1));
    api.current.onEvent("MODIFIED", api.put("a", { spec: 1 }));
    api.current.onEvent("ADDED", api.put("b"));
    api.current.onEvent("DELETED", a);
    expect(events).toEqual([
      ["added", "a", undefined],
      ["modified", "a", "11"],
      ["added", "b", undefined],
      ["deleted", "a", "12"],
    ]);
    expect(inf.list().map((o) => o.metadata.name)).toEqual(["b"]);
    expect(inf.get("b", "ns")?.metadata.resourceVersion).toBe("13");
    expect(inf.list("other")).toEqual([]);
  });

  it("relists on 410 Gone (ERROR event) and delivers only the differences", async () => {
    const api = new ScriptedApi();
    api.put("a");
    api.put("b");
    const inf = start(api);
    await inf.synced;
    await vi.waitFor(() => expect(api.watches).toHaveLength(1));
    api.objects.delete("a");
    api.put("b", { spec: 2 });
    api.put("c");
    events.length = 0;
    api.current.onEvent("ERROR", { kind: "Status", code: 410, message: "too old resource version" });
    await vi.waitFor(() => expect(api.lists).toBe(2));
    await vi.waitFor(() => expect(api.watches).toHaveLength(2));
    expect(events.sort()).toEqual([
      ["added", "c", undefined],
      ["deleted", "a", undefined],
      ["modified", "b", "12"],
    ]);
    expect(api.current.query.resourceVersion).toBe("14");
    expect(inf.restarts()).toBe(1);
  });

  it("relists when the watch is refused with HTTP 410", async () => {
    const api = new ScriptedApi();
    const inf = start(api);
    await inf.synced;
    api.failWatchWith.push({ statusCode: 410 });
    await vi.waitFor(() => expect(api.watches).toHaveLength(1));
    api.current.onDone(null); // a normal end: resumes at once, and that watch is refused with 410
    await vi.waitFor(() => expect(api.lists).toBe(2));
  });

  it("resumes from the last resourceVersion after a failure, with backoff and without relisting", async () => {
    const api = new ScriptedApi();
    const errors: string[] = [];
    const inf = start(api, {}, errors);
    await inf.synced;
    await vi.waitFor(() => expect(api.watches).toHaveLength(1));
    api.current.onEvent("ADDED", api.put("x"));
    api.failWatchWith.push(new Error("ECONNREFUSED"), new Error("ECONNREFUSED"));
    api.current.onDone(new Error("Premature close"));
    await vi.waitFor(() => expect(api.watches).toHaveLength(2));
    expect(api.current.query.resourceVersion).toBe("11");
    expect(api.lists).toBe(1);
    expect(errors.filter((e) => e.startsWith("watch"))).toHaveLength(3);
    expect(inf.healthy()).toBe(true);
  });

  it("retries a failed list until it succeeds", async () => {
    const api = new ScriptedApi();
    api.failLists = 3;
    api.put("a");
    const errors: string[] = [];
    const inf = start(api, {}, errors);
    await inf.synced;
    expect(api.lists).toBe(4);
    expect(errors).toHaveLength(3);
    expect(events).toEqual([["added", "a", undefined]]);
  });

  it("restarts a silent watch, and a bookmark counts as a sign of life", async () => {
    const api = new ScriptedApi();
    const errors: string[] = [];
    const inf = start(api, { silenceTimeoutMs: 120 }, errors);
    await inf.synced;
    await vi.waitFor(() => expect(api.watches).toHaveLength(1));
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 50));
      api.current.onEvent("BOOKMARK", { kind: "Delegation", metadata: { resourceVersion: String(20 + i) } });
    }
    expect(api.watches).toHaveLength(1);
    await vi.waitFor(() => expect(api.watches).toHaveLength(2), { timeout: 2000 });
    expect(api.watches[0]?.aborted).toBe(true);
    expect(api.current.query.resourceVersion).toBe("23");
    expect(api.lists).toBe(1);
    expect(inf.healthy()).toBe(true); // a re-established watch is a sign of life, even with nothing to say
    expect(inf.lastEventAt()).toBeGreaterThan(0);
    expect(errors).toEqual([]); // a quiet cluster is not a failure: nothing to warn about
  });

  it("survives a throwing callback and reports it", async () => {
    const api = new ScriptedApi();
    api.put("a");
    const errors: string[] = [];
    const inf = start(
      api,
      {
        onEvent: () => {
          throw new Error("boom");
        },
      },
      errors,
    );
    await inf.synced;
    await vi.waitFor(() => expect(api.watches).toHaveLength(1));
    api.current.onEvent("ADDED", api.put("b"));
    expect(inf.list()).toHaveLength(2);
    expect(errors).toEqual(["added callback threw: boom", "added callback threw: boom"]);
  });

  it("re-delivers every cached object on resync", async () => {
    const api = new ScriptedApi();
    api.put("a");
    api.put("b");
    const inf = start(api, { resyncMs: 40 });
    await inf.synced;
    await vi.waitFor(() => expect(events.filter((e) => e[0] === "resync").length).toBeGreaterThanOrEqual(2));
  });

  it("stops: the watch is aborted, and `synced` rejects when it never listed", async () => {
    const api = new ScriptedApi();
    const inf = start(api);
    await inf.synced;
    await vi.waitFor(() => expect(api.watches).toHaveLength(1));
    await inf.stop();
    expect(api.current.aborted).toBe(true);
    expect(inf.state()).toBe("stopped");
    const broken = new ScriptedApi();
    broken.failLists = 1000;
    const never = start(broken);
    await never.stop();
    await expect(never.synced).rejects.toThrow(/stopped before its first list/);
  });
});
