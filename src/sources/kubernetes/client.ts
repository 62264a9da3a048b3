/**
 * A small typed client of the Kubernetes API over @kubernetes/client-node 1.4: `KubeConfig`
 * supplies the server, TLS material and credentials (kubeconfig file, `KUBECONFIG`, or the
 * in-cluster service account, whose token file is re-read as it rotates), client-node's `Watch`
 * streams watches, and plain JSON requests go over ONE keep-alive agent.
 *
 * Why not the generated API classes for requests: in 1.4 they build a new TLS agent for every
 * call (a handshake per request), and a patch needs a content-type middleware per call. Here a
 * request is one method, a path and a body; a failure is a `KubeApiError` with a stable `code`
 * taken from the server's Status object (409 Conflict is `CONFLICT`), never a message to parse.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import http from "node:http";
import https from "node:https";
import { KubeConfig, Watch } from "@kubernetes/client-node";
import { codeForStatus, KubeApiError } from "./errors.js";
import type { KubeList, KubeObject } from "./objects.js";

/** Options of one request. */
export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Content type of the body (default application/json). */
  contentType?: string;
  /** Abort after this long without an answer (default: the client's). */
  timeoutMs?: number;
}

/** A running watch: abort it to end it (its `done` callback then runs). */
export interface WatchHandle {
  abort(): void;
}

/** What an informer needs of a client: requests and watches. `KubeClient` implements it; tests fake it. */
export interface KubeTransport {
  request<T>(method: string, path: string, opts?: RequestOptions): Promise<T>;
  /**
   * Starts a watch of `path` (`watch=true` is added). `onEvent` gets every line's `type` and
   * `object` (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR); `onDone` runs once when the stream
   * ends, with the error if it failed (an object with `statusCode` for an HTTP refusal).
   */
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, object: unknown) => void,
    onDone: (err: unknown) => void,
  ): Promise<WatchHandle>;
}

/** JSON Patch operation (RFC 6902). */
export interface JsonPatchOp {
  op: "add" | "remove" | "replace" | "test" | "move" | "copy";
  path: string;
  value?: unknown;
  from?: string;
}

/** Content types of patches. */
export const MERGE_PATCH = "application/merge-patch+json";
export const JSON_PATCH = "application/json-patch+json";

/** Whether a kubeconfig can be had: KUBECONFIG, ~/.kube/config, or the in-cluster service account. */
export function kubeconfigAvailable(env: NodeJS.ProcessEnv, home = homedir()): boolean {
  if (env.KUBECONFIG?.trim()) return true;
  if (existsSync(join(home, ".kube", "config"))) return true;
  return Boolean(env.KUBERNETES_SERVICE_HOST) && existsSync("/var/run/secrets/kubernetes.io/serviceaccount/token");
}

/** Loads the kubeconfig: `path` when given, else `KUBECONFIG`, `~/.kube/config` or the in-cluster service account. */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path !== undefined) kc.loadFromFile(path);
  else if (!kubeconfigAvailable(process.env)) {
    // loadFromDefault would fall back to http://localhost:8080, which the client then refuses on every try.
    throw new KubeApiError(
      "UNAVAILABLE",
      0,
      "no kubeconfig: set KUBECONFIG, create ~/.kube/config, or run in a cluster (KUBERNETES_SERVICE_HOST and a service account)",
    );
  } else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new KubeApiError("UNAVAILABLE", 0, "the kubeconfig names no current cluster");
  return kc;
}

function queryString(q: RequestOptions["query"]): string {
  if (!q) return "";
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : "";
}

/** The Kubernetes client (see the module comment). */
export class KubeClient implements KubeTransport {
  private agent: http.Agent | undefined;
  private agentKey = "";
  private readonly watcher: Watch;
  private readonly timeoutMs: number;
  private readonly maxSockets: number;
  private readonly fieldManager: string | undefined;
  readonly server: URL;

  /**
   * `fieldManager` names this client in the `managedFields` of what it writes (added to every
   * POST, PUT and PATCH that does not name one), instead of the API server's default from the
   * user agent ("unknown" for Node).
   */
  constructor(
    readonly config: KubeConfig,
    opts: { timeoutMs?: number; maxSockets?: number; fieldManager?: string } = {},
  ) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new KubeApiError("UNAVAILABLE", 0, "the kubeconfig names no current cluster");
    this.server = new URL(cluster.server);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxSockets = opts.maxSockets ?? 32;
    this.fieldManager = opts.fieldManager;
    this.watcher = new Watch(config);
  }

  /** Request options with credentials and the shared keep-alive agent (rebuilt when the TLS material changes). */
  private async requestOptions(): Promise<https.RequestOptions> {
    const opts: https.RequestOptions = {};
    await this.config.applyToHTTPSOptions(opts);
    if (this.config.getCurrentCluster()?.proxyUrl) return opts; // client-node's proxy agent, per request
    const tls = { ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: opts.rejectUnauthorized, servername: opts.servername };
    const key = JSON.stringify([tls.ca, tls.cert, tls.key, tls.rejectUnauthorized, tls.servername].map((v) => (Buffer.isBuffer(v) ? v.toString("base64") : v)));
    if (!this.agent || key !== this.agentKey) {
      this.agent?.destroy();
      const common = { keepAlive: true, maxSockets: this.maxSockets };
      this.agent = this.server.protocol === "http:" ? new http.Agent(common) : new https.Agent({ ...common, ...tls });
      this.agentKey = key;
    }
    opts.agent = this.agent;
    return opts;
  }

  /** One JSON request; resolves with the parsed body, throws KubeApiError on failure. */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const base = await this.requestOptions();
    const writes = method === "POST" || method === "PUT" || method === "PATCH";
    const query =
      writes && this.fieldManager !== undefined && opts.query?.fieldManager === undefined ? { ...opts.query, fieldManager: this.fieldManager } : opts.query;
    const url = new URL(path + queryString(query), this.server);
    const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers: http.OutgoingHttpHeaders = { accept: "application/json" };
    const given = base.headers;
    if (given && !Array.isArray(given)) for (const [k, v] of Object.entries(given)) if (v !== undefined) headers[k.toLowerCase()] = v;
    if (body) {
      headers["content-type"] = opts.contentType ?? "application/json";
      headers["content-length"] = body.length;
    }
    if (base.auth) headers.authorization = `Basic ${Buffer.from(base.auth).toString("base64")}`;
    const send = url.protocol === "http:" ? http.request : https.request;
    const timeout = opts.timeoutMs ?? this.timeoutMs;
    return new Promise<T>((resolve, reject) => {
      const req = send(url, { ...base, auth: undefined, method, headers, timeout }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", (e) => reject(new KubeApiError("UNAVAILABLE", 0, `${method} ${url.pathname}: ${e.message}`)));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          let parsed: unknown;
          try {
            parsed = text === "" ? undefined : JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          if (status >= 200 && status < 300) {
            if (parsed === undefined && text !== "") reject(new KubeApiError("BAD_RESPONSE", status, `${method} ${url.pathname}: the answer is not JSON`));
            else resolve(parsed as T);
            return;
          }
          const st = (parsed ?? {}) as { reason?: unknown; message?: unknown };
          const reason = typeof st.reason === "string" ? st.reason : undefined;
          const message = typeof st.message === "string" ? st.message : text.slice(0, 200) || `HTTP ${status}`;
          reject(new KubeApiError(codeForStatus(status, reason), status, `${method} ${url.pathname}: ${message}`, reason));
        });
      });
      req.on("timeout", () => req.destroy(new Error(`no answer within ${timeout} ms`)));
      req.on("error", (e) => reject(new KubeApiError("UNAVAILABLE", 0, `${method} ${url.pathname}: ${e.message}`)));
      req.end(body);
    });
  }

  /** GET one object. */
  get<T extends KubeObject>(path: string): Promise<T> {
    return this.request<T>("GET", path);
  }

  /** One page of a list. */
  list<T extends KubeObject>(path: string, query: RequestOptions["query"] = {}): Promise<KubeList<T>> {
    return this.request<KubeList<T>>("GET", path, { query });
  }

  /** POST a new object to a collection. */
  create<T extends KubeObject>(path: string, body: unknown): Promise<T> {
    return this.request<T>("POST", path, { body });
  }

  /** PUT (replace) an object; with `metadata.resourceVersion` set, a stale one fails with CONFLICT. */
  replace<T extends KubeObject>(path: string, body: unknown): Promise<T> {
    return this.request<T>("PUT", path, { body });
  }

  /** JSON merge patch (RFC 7386). */
  mergePatch<T extends KubeObject>(path: string, patch: unknown): Promise<T> {
    return this.request<T>("PATCH", path, { body: patch, contentType: MERGE_PATCH });
  }

  /** JSON patch (RFC 6902). */
  jsonPatch<T extends KubeObject>(path: string, ops: readonly JsonPatchOp[]): Promise<T> {
    return this.request<T>("PATCH", path, { body: ops, contentType: JSON_PATCH });
  }

  /** A watch through client-node's `Watch` (see `KubeTransport.watch`). */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, object: unknown) => void,
    onDone: (err: unknown) => void,
  ): Promise<WatchHandle> {
    const params: Record<string, string | number | boolean> = {};
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params[k] = v;
    const controller = await this.watcher.watch(
      path,
      params,
      (type: string, object: unknown) => onEvent(type, object),
      (err: unknown) => onDone(err),
    );
    return { abort: () => controller.abort() };
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }
}
