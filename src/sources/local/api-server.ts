/**
 * A tiny Kubernetes API server in memory: the `KubeTransport` the controller (and the informer)
 * talk to, over a `LocalObjectStore`, so `writ dev` runs the SAME reconcilers on manifests read
 * from a folder as `writ controller` runs on a cluster.
 *
 * Serves: list, get, create (POST), delete, merge and JSON patches of the Writ resources
 * (`/apis/writ.dev/v1alpha1[/namespaces/<ns>]/<plural>[/<name>[/status]]`); watches of them
 * (events delivered asynchronously and in order, a BOOKMARK every 30 s so a quiet watch stays
 * healthy, 410 Gone for a resourceVersion older than the history kept); `GET
 * /api/v1/namespaces/<ns>` (every namespace exists, labelled by `namespaceLabels`); `POST
 * /api/v1/namespaces/<ns>/events` (handed to `onEvent`, not stored); `GET /version`.
 * Anything else is 404. Failures are `KubeApiError`s with the API server's codes.
 */
import { WRIT_GROUP, WRIT_VERSION } from "../../core/crd/index.js";
import { type RequestOptions, type WatchHandle, type KubeTransport, KubeApiError, isKubeObject, type KubeList, type KubeObject } from "../kubernetes/index.js";
import { KIND_OF_PLURAL, type LocalObjectStore, type WatchEventType } from "./object-store.js";

/** A Kubernetes Event posted by the controller. */
export interface PostedEvent {
  namespace: string;
  reason: string;
  type: string;
  message: string;
  involvedObject: { kind?: string; name?: string; namespace?: string };
}

/** Options of a LocalApiServer. */
export interface LocalApiServerOptions {
  store: LocalObjectStore;
  /** Labels of namespace `ns` (e.g. the organization binding). */
  namespaceLabels(ns: string): Record<string, string>;
  /** An Event was posted. */
  onEvent?(event: PostedEvent): void;
  /** Interval of BOOKMARKs on watches (default 30 s). */
  bookmarkMs?: number;
}

type Route =
  | { kind: "version" }
  | { kind: "namespace"; namespace: string }
  | { kind: "events"; namespace: string }
  | { kind: "writ"; plural: string; namespace: string | undefined; name: string | undefined; subresource: string | undefined };

const WRIT_PREFIX = `/apis/${WRIT_GROUP}/${WRIT_VERSION}/`;
const notFound = (path: string) => new KubeApiError("NOT_FOUND", 404, `the server could not find the requested resource (${path})`, "NotFound");

/** Parses a request path; undefined for anything not served. */
function route(path: string): Route | undefined {
  if (path === "/version") return { kind: "version" };
  const core = /^\/api\/v1\/namespaces\/([^/]+)(\/events)?$/.exec(path);
  if (core) return core[2] ? { kind: "events", namespace: core[1] as string } : { kind: "namespace", namespace: core[1] as string };
  if (!path.startsWith(WRIT_PREFIX)) return undefined;
  let parts = path.slice(WRIT_PREFIX.length).split("/");
  let namespace: string | undefined;
  if (parts[0] === "namespaces") {
    namespace = parts[1];
    parts = parts.slice(2);
  }
  const [plural, name, subresource, ...extra] = parts;
  if (!plural || !KIND_OF_PLURAL.has(plural) || extra.length > 0 || (subresource !== undefined && subresource !== "status")) return undefined;
  if (name !== undefined && namespace === undefined) return undefined;
  return { kind: "writ", plural, namespace, name, subresource };
}

/** The local API server (see the module comment). */
export class LocalApiServer implements KubeTransport {
  constructor(private readonly opts: LocalApiServerOptions) {}

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const r = route(path);
    if (!r) throw notFound(path);
    return this.handle(method, r, path, opts) as T;
  }

  private handle(method: string, r: Route, path: string, opts: RequestOptions): unknown {
    const store = this.opts.store;
    if (r.kind === "version" && method === "GET") return { major: "1", minor: "20", gitVersion: "writ-local" };
    if (r.kind === "namespace" && method === "GET") {
      return { apiVersion: "v1", kind: "Namespace", metadata: { name: r.namespace, labels: this.opts.namespaceLabels(r.namespace) } };
    }
    if (r.kind === "events" && method === "POST") {
      const b = (opts.body ?? {}) as Partial<PostedEvent>;
      this.opts.onEvent?.({
        namespace: r.namespace,
        reason: String(b.reason ?? ""),
        type: String(b.type ?? ""),
        message: String(b.message ?? ""),
        involvedObject: (b.involvedObject ?? {}) as PostedEvent["involvedObject"],
      });
      return opts.body;
    }
    if (r.kind !== "writ") throw notFound(path);
    const ns = r.namespace ?? "";
    if (r.name === undefined) {
      if (method === "GET")
        return {
          apiVersion: "v1",
          kind: "List",
          metadata: { resourceVersion: store.resourceVersion() },
          items: store.list(r.plural, r.namespace),
        } satisfies KubeList & Record<string, unknown>;
      if (method === "POST" && r.namespace !== undefined) {
        if (!isKubeObject(opts.body)) throw new KubeApiError("INVALID", 422, "the body is not an object with metadata.name", "Invalid");
        return store.create(r.plural, { ...opts.body, metadata: { ...opts.body.metadata, namespace: ns } });
      }
      throw new KubeApiError("BAD_RESPONSE", 405, `${method} is not allowed on ${path}`, "MethodNotAllowed");
    }
    if (method === "GET" && r.subresource === undefined) {
      const o = store.get(r.plural, ns, r.name);
      if (!o) throw notFound(path);
      return o;
    }
    if (method === "PATCH") return store.patch(r.plural, ns, r.name, opts.body, opts.contentType ?? "application/merge-patch+json", r.subresource);
    if (method === "DELETE" && r.subresource === undefined) {
      store.delete(r.plural, ns, r.name);
      return { kind: "Status", status: "Success" };
    }
    throw new KubeApiError("BAD_RESPONSE", 405, `${method} is not allowed on ${path}`, "MethodNotAllowed");
  }

  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, object: unknown) => void,
    onDone: (err: unknown) => void,
  ): Promise<WatchHandle> {
    const r = route(path);
    if (!r || r.kind !== "writ" || r.name !== undefined) throw Object.assign(notFound(path), { statusCode: 404 });
    const queue: [string, unknown][] = [];
    let ended = false;
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      while (!ended && queue.length > 0) {
        const [type, obj] = queue.shift() as [string, unknown];
        onEvent(type, obj);
      }
    };
    const push = (type: string, obj: unknown) => {
      if (ended) return;
      queue.push([type, obj]);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    };
    const from = query.resourceVersion === undefined ? undefined : String(query.resourceVersion);
    const sub = this.opts.store.subscribe(r.plural, r.namespace, from, (type: WatchEventType, obj: KubeObject) => push(type, obj));
    if (sub === "gone") {
      push("ERROR", { kind: "Status", apiVersion: "v1", status: "Failure", code: 410, reason: "Expired", message: `too old resource version: ${from ?? ""}` });
      return { abort: () => void (ended = true) };
    }
    const bookmark = setInterval(
      () =>
        push("BOOKMARK", {
          kind: KIND_OF_PLURAL.get(r.plural),
          apiVersion: `${WRIT_GROUP}/${WRIT_VERSION}`,
          metadata: { resourceVersion: this.opts.store.resourceVersion() },
        }),
      this.opts.bookmarkMs ?? 30_000,
    );
    bookmark.unref();
    return {
      abort: () => {
        if (ended) return;
        ended = true;
        clearInterval(bookmark);
        sub.close();
        setImmediate(() => onDone(null));
      },
    };
  }
}
