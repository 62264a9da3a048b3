/**
 * The object store of the local API server: Writ resources in memory with the Kubernetes API
 * server's bookkeeping, so the controller's reconcilers run against it unchanged.
 *
 * Promises:
 * - One resourceVersion counter for every change (as etcd's revision); `metadata.generation`
 *   starts at 1 and grows only when `spec` changes; a status write (`status` subresource) never
 *   changes it, and `.status` sent with the main resource is ignored.
 * - Optimistic concurrency: a patch carrying `metadata.resourceVersion` fails with CONFLICT
 *   unless it is the current one.
 * - Graceful deletion: deleting an object with finalizers sets `deletionTimestamp`; it is
 *   removed when its last finalizer goes (DELETED is announced with its last state).
 * - Watches: ADDED / MODIFIED / DELETED of one plural (and namespace), in resourceVersion
 *   order, resumable from any resourceVersion within the last `historySize` changes (older:
 *   410 Gone). Objects handed out are copies.
 * Defaults of the CRD schema are applied to `spec` on create, apply and patch (./defaults.ts).
 */
import { randomUUID } from "node:crypto";
import { WRIT_GROUP, WRIT_KINDS, WRIT_VERSION } from "../../core/crd/index.js";
import { KubeApiError, type KubeObject } from "../kubernetes/index.js";
import { specSchemaOf, withDefaults } from "./defaults.js";
import { jsonPatch, mergePatch, PatchError, sameJson } from "./patch.js";

/** The apiVersion of every stored object. */
export const LOCAL_API_VERSION = `${WRIT_GROUP}/${WRIT_VERSION}`;
/** Plural -> kind of the Writ resources. */
export const KIND_OF_PLURAL: ReadonlyMap<string, string> = new Map(WRIT_KINDS.map((k) => [k.plural, k.kind]));

/** What callers are told about changes. */
export interface StoreHooks {
  /** A status was written. */
  onStatus?(plural: string, obj: KubeObject): void;
  /** An object went away (its last finalizer was removed, or it had none). */
  onRemoved?(plural: string, obj: KubeObject): void;
  /** Anything changed (e.g. to persist a snapshot). */
  onChange?(): void;
}

/** A watch event. */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

interface Change {
  rv: number;
  type: WatchEventType;
  plural: string;
  namespace: string;
  obj: KubeObject;
}

interface Watcher {
  plural: string;
  namespace: string | undefined;
  send(type: WatchEventType, obj: KubeObject): void;
}

/** A snapshot of the store (to persist it). */
export interface StoreSnapshot {
  resourceVersion: number;
  objects: { plural: string; object: KubeObject }[];
}

/** The key of an object: `plural/namespace/name`. */
export function storeKey(plural: string, namespace: string, name: string): string {
  return `${plural}/${namespace}/${name}`;
}

const notFound = (what: string) => new KubeApiError("NOT_FOUND", 404, `${what} not found`, "NotFound");
const invalid = (message: string) => new KubeApiError("INVALID", 422, message, "Invalid");
/** Kubernetes times: RFC 3339, whole seconds. */
const kubeTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** The store (see the module comment). */
export class LocalObjectStore {
  private rv = 0;
  private readonly objects = new Map<string, { plural: string; obj: KubeObject }>();
  private readonly history: Change[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly now: () => number;
  private readonly historySize: number;

  constructor(private readonly opts: { hooks?: StoreHooks; now?: () => number; historySize?: number; initial?: StoreSnapshot } = {}) {
    this.now = opts.now ?? Date.now;
    this.historySize = opts.historySize ?? 1000;
    for (const { plural, object } of opts.initial?.objects ?? []) {
      this.objects.set(storeKey(plural, object.metadata.namespace ?? "", object.metadata.name), { plural, obj: structuredClone(object) });
    }
    this.rv = opts.initial?.resourceVersion ?? 0;
  }

  /** The current resourceVersion. */
  resourceVersion(): string {
    return String(this.rv);
  }

  /** A copy of one object. */
  get(plural: string, namespace: string, name: string): KubeObject | undefined {
    const hit = this.objects.get(storeKey(plural, namespace, name));
    return hit ? structuredClone(hit.obj) : undefined;
  }

  /** Copies of the objects of `plural` (in `namespace` when given), ordered by key. */
  list(plural: string, namespace?: string): KubeObject[] {
    return [...this.objects.entries()]
      .filter(([, v]) => v.plural === plural && (namespace === undefined || v.obj.metadata.namespace === namespace))
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, v]) => structuredClone(v.obj));
  }

  /** Keys of every object. */
  keys(): string[] {
    return [...this.objects.keys()];
  }

  /** A snapshot (copies). */
  snapshot(): StoreSnapshot {
    return { resourceVersion: this.rv, objects: [...this.objects.values()].map((v) => ({ plural: v.plural, object: structuredClone(v.obj) })) };
  }

  /**
   * Creates the object or updates its spec, labels and annotations (annotations are merged,
   * so the controller's stay), as `kubectl apply` would. Returns what happened. `uid` is the
   * uid of a new object (default: a random one).
   */
  apply(plural: string, desired: KubeObject, opts: { uid?: string } = {}): "created" | "configured" | "unchanged" {
    const namespace = desired.metadata.namespace ?? "default";
    const key = storeKey(plural, namespace, desired.metadata.name);
    const current = this.objects.get(key)?.obj;
    const annotations = desired.metadata.annotations ?? {};
    if (!current) {
      this.create(plural, { ...desired, metadata: { ...desired.metadata, namespace, annotations } }, opts.uid);
      return "created";
    }
    const next = structuredClone(current);
    const spec = this.defaulted(next.kind, desired.spec);
    if (!sameJson(spec, current.spec)) {
      next.spec = spec;
      next.metadata.generation = (current.metadata.generation ?? 1) + 1;
    }
    next.metadata.labels = { ...(desired.metadata.labels ?? {}) };
    next.metadata.annotations = { ...(current.metadata.annotations ?? {}), ...annotations };
    if (sameJson(next, current)) return "unchanged";
    this.commit(plural, key, next, "MODIFIED");
    return "configured";
  }

  /** Creates an object (ALREADY_EXISTS when its key is taken), with `uid` or a random one (never the object's own). */
  create(plural: string, obj: KubeObject, uid: string = randomUUID()): KubeObject {
    const kind = KIND_OF_PLURAL.get(plural);
    if (!kind) throw notFound(`resource ${plural}`);
    const namespace = obj.metadata.namespace ?? "default";
    const key = storeKey(plural, namespace, obj.metadata.name);
    if (this.objects.has(key)) throw new KubeApiError("ALREADY_EXISTS", 409, `${plural} ${obj.metadata.name} already exists`, "AlreadyExists");
    const { status: _ignored, ...rest } = obj;
    const created: KubeObject = {
      ...structuredClone(rest),
      apiVersion: LOCAL_API_VERSION,
      kind,
      metadata: {
        ...structuredClone(obj.metadata),
        namespace,
        uid,
        generation: 1,
        creationTimestamp: kubeTime(this.now()),
        labels: { ...(obj.metadata.labels ?? {}) },
        annotations: { ...(obj.metadata.annotations ?? {}) },
      },
      spec: this.defaulted(kind, obj.spec),
    };
    delete created.metadata.deletionTimestamp;
    delete created.metadata.resourceVersion;
    return this.commit(plural, key, created, "ADDED");
  }

  /** Deletes an object (gracefully when it has finalizers). */
  delete(plural: string, namespace: string, name: string): "deleting" | "deleted" {
    const key = storeKey(plural, namespace, name);
    const current = this.objects.get(key)?.obj;
    if (!current) throw notFound(`${plural} ${namespace}/${name}`);
    if ((current.metadata.finalizers ?? []).length === 0) {
      this.remove(plural, key, current);
      return "deleted";
    }
    if (!current.metadata.deletionTimestamp) {
      const next = structuredClone(current);
      next.metadata.deletionTimestamp = kubeTime(this.now());
      this.commit(plural, key, next, "MODIFIED");
    }
    return "deleting";
  }

  /**
   * Patches an object (merge patch or JSON patch by `contentType`); `subresource` "status"
   * changes only `.status`, otherwise `.status` is kept as it was.
   */
  patch(plural: string, namespace: string, name: string, body: unknown, contentType: string, subresource?: string): KubeObject {
    const key = storeKey(plural, namespace, name);
    const current = this.objects.get(key)?.obj;
    if (!current) throw notFound(`${plural} ${namespace}/${name}`);
    let patched: unknown;
    try {
      patched = contentType.startsWith("application/json-patch+json") ? jsonPatch(current, body) : mergePatch(current, body);
    } catch (err) {
      if (err instanceof PatchError) throw invalid(err.message);
      throw err;
    }
    const p = patched as KubeObject;
    const sentRv = (body as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
    if (typeof sentRv === "string" && sentRv !== current.metadata.resourceVersion) {
      throw new KubeApiError("CONFLICT", 409, `the object ${namespace}/${name} has been modified; please apply your changes to the latest version`, "Conflict");
    }
    const next = structuredClone(current);
    if (subresource === "status") {
      next.status = p.status;
    } else {
      const spec = this.defaulted(current.kind, p.spec);
      if (!sameJson(spec, current.spec)) {
        next.spec = spec;
        next.metadata.generation = (current.metadata.generation ?? 1) + 1;
      }
      const m = (p.metadata ?? {}) as KubeObject["metadata"];
      for (const f of ["labels", "annotations", "finalizers"] as const) {
        if (m[f] === undefined) delete next.metadata[f];
        else (next.metadata as Record<string, unknown>)[f] = m[f];
      }
    }
    if (sameJson(next, current)) return structuredClone(current);
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      this.remove(plural, key, next);
      return structuredClone(next);
    }
    const out = this.commit(plural, key, next, "MODIFIED");
    if (subresource === "status") this.opts.hooks?.onStatus?.(plural, structuredClone(out));
    return out;
  }

  /**
   * Streams changes of `plural` (in `namespace`) after resourceVersion `from` (none: from
   * now) to `send`. "gone" when `from` is older than the history kept.
   */
  subscribe(plural: string, namespace: string | undefined, from: string | undefined, send: Watcher["send"]): { close(): void } | "gone" {
    const since = from !== undefined && /^\d+$/.test(from) ? Math.min(Number(from), this.rv) : this.rv;
    const oldest = this.history[0]?.rv ?? this.rv + 1;
    if (since < this.rv && oldest > since + 1) return "gone";
    const watcher: Watcher = { plural, namespace, send };
    for (const c of this.history) if (c.rv > since && this.matches(watcher, c)) send(c.type, structuredClone(c.obj));
    this.watchers.add(watcher);
    return { close: () => this.watchers.delete(watcher) };
  }

  private matches(w: Watcher, c: { plural: string; namespace: string }): boolean {
    return w.plural === c.plural && (w.namespace === undefined || w.namespace === c.namespace);
  }

  private defaulted(kind: string | undefined, spec: unknown): unknown {
    return withDefaults(structuredClone(spec), kind ? specSchemaOf(kind) : undefined);
  }

  private record(type: WatchEventType, plural: string, obj: KubeObject): void {
    const change: Change = { rv: this.rv, type, plural, namespace: obj.metadata.namespace ?? "", obj: structuredClone(obj) };
    this.history.push(change);
    if (this.history.length > this.historySize) this.history.shift();
    for (const w of this.watchers) if (this.matches(w, change)) w.send(type, structuredClone(obj));
    this.opts.hooks?.onChange?.();
  }

  private commit(plural: string, key: string, obj: KubeObject, type: "ADDED" | "MODIFIED"): KubeObject {
    this.rv += 1;
    obj.metadata.resourceVersion = String(this.rv);
    this.objects.set(key, { plural, obj });
    this.record(type, plural, obj);
    return structuredClone(obj);
  }

  private remove(plural: string, key: string, last: KubeObject): void {
    this.rv += 1;
    const gone = structuredClone(last);
    gone.metadata.resourceVersion = String(this.rv);
    this.objects.delete(key);
    this.record("DELETED", plural, gone);
    this.opts.hooks?.onRemoved?.(plural, structuredClone(gone));
  }
}
