/**
 * A supervised informer: a local cache of one resource kind kept current by list + watch, which
 * keeps itself alive. Reusable by any process (the controller, and `writ serve` for read-only
 * watches).
 *
 * Why not client-node's `makeInformer`/`ListWatch` (1.4): a watch error other than 410 stops it
 * until someone restarts it (a failed relist too), restarting it from its own error callback races
 * its pending abort, it cannot ask for bookmarks so a quiet watch cannot be told from a dead one,
 * and exceptions thrown in callbacks are swallowed by `Watch`. Reported upstream as
 * kubernetes-client/javascript#596, #958 (a watch that silently stops), #795 and #1933 (restarts).
 * So this module runs its own reflector loop over client-node's `Watch`:
 *
 * - list (paged, `limit` 500), then watch from the list's resourceVersion with
 *   `allowWatchBookmarks=true` and a random server-side `timeoutSeconds` (5 to 10 minutes, as
 *   client-go), so every watch is recycled and the server sends a BOOKMARK about once a minute;
 * - a watch that ends normally is resumed at once from the last resourceVersion; 410 Gone (as
 *   an HTTP status or an ERROR event) relists; any other failure (or a failed list) retries with
 *   jittered exponential backoff (800 ms doubling to 30 s), forever, until `stop()`;
 * - a watchdog: no event or bookmark for `silenceTimeoutMs` (default 150 s, 2.5 bookmark
 *   intervals) aborts the watch and resumes it (a reconnect, not a relist); an established
 *   watch counts as a sign of life, so an empty collection (no bookmarks) stays healthy;
 * - a periodic resync re-delivers every cached object as `resync` (default every 10 minutes);
 * - callbacks run inside a try/catch; a throwing callback is reported to `onError` and never
 *   stops the informer. Callbacks should only enqueue keys.
 *
 * Events: `added`, `modified` (with the previous object), `deleted` (the last known state),
 * `resync`. After a relist, only differences are delivered (by resourceVersion).
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { backoffDelay, randomBetween, WATCH_BACKOFF, type BackoffPolicy } from "./backoff.js";
import { KubeClient, type KubeTransport, type WatchHandle } from "./client.js";
import { statusOf } from "./errors.js";
import { isKubeObject, objectKey, resourcePath, type KubeList, type KubeObject, type ResourceRef } from "./objects.js";

/** What happened to an object. */
export type InformerEventType = "added" | "modified" | "deleted" | "resync";

/** Where an informer is in its loop. */
export type InformerState = "starting" | "listing" | "watching" | "backoff" | "stopped";

/** Options of `startInformer`. Give `kubeconfig` or `client` (a client to share). */
export interface InformerOptions<T extends KubeObject = KubeObject> extends ResourceRef {
  kubeconfig?: KubeConfig;
  client?: KubeTransport;
  /** Called for every change; must not block (enqueue a key). `old` is the previous object of `modified`. */
  onEvent(type: InformerEventType, obj: T, old?: T): void;
  /** Failures the informer recovers from (list, watch, a throwing callback), for logs. */
  onError?(err: unknown, context: string): void;
  /** Called on every state change. */
  onStateChange?(state: InformerState): void;
  labelSelector?: string;
  fieldSelector?: string;
  /** Re-deliver every cached object this often (default 600 000 ms; 0: never). */
  resyncMs?: number;
  /** Restart a watch that delivered nothing (not even a bookmark) for this long (default 150 000 ms). */
  silenceTimeoutMs?: number;
  /** Backoff after failures (default 800 ms doubling to 30 s, equal jitter). */
  backoff?: BackoffPolicy;
  /** Server-side timeout of each watch, seconds, random in [min, max] (default 300 to 600). */
  watchTimeoutSeconds?: { min: number; max: number };
  /** Page size of lists (default 500). */
  pageSize?: number;
}

/** A running informer. */
export interface Informer<T extends KubeObject = KubeObject> {
  /** Resolves after the first complete list; rejects if stopped before. */
  readonly synced: Promise<void>;
  hasSynced(): boolean;
  /** True while a watch is established and has not been silent longer than the watchdog allows. */
  healthy(): boolean;
  state(): InformerState;
  /** Epoch ms of the last list, event, bookmark or established watch (undefined before the first). */
  lastEventAt(): number | undefined;
  /** Epoch ms since which no watch has been established (undefined while watching). */
  disconnectedSince(): number | undefined;
  /** Number of watch (re)starts after the first. */
  restarts(): number;
  get(name: string, namespace?: string): T | undefined;
  /** Cached objects, of one namespace when given. */
  list(namespace?: string): T[];
  /** Stops the loop and the watch; the cache stays readable. */
  stop(): Promise<void>;
}

type Outcome = { kind: "closed" } | { kind: "gone" } | { kind: "silent" } | { kind: "stopped" } | { kind: "error"; err: unknown };

const DEFAULT_RESYNC_MS = 600_000;
const DEFAULT_SILENCE_MS = 150_000;
/** A watch that closes sooner than this without delivering anything counts as a failure. */
const MIN_HEALTHY_WATCH_MS = 1000;

class SupervisedInformer<T extends KubeObject> implements Informer<T> {
  readonly synced: Promise<void>;
  private resolveSynced!: () => void;
  private rejectSynced!: (e: Error) => void;
  private isSynced = false;
  private cache = new Map<string, T>();
  private rv = "";
  private current: InformerState = "starting";
  private stopped = false;
  private lastActivity: number | undefined;
  private disconnectedAt: number | undefined = Date.now();
  private watchStarts = 0;
  private abortWatch: (() => void) | undefined;
  private wake: (() => void) | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private readonly loopDone: Promise<void>;
  private readonly client: KubeTransport;
  private readonly path: string;

  constructor(private readonly opts: InformerOptions<T>) {
    if (opts.client) this.client = opts.client;
    else if (opts.kubeconfig) this.client = new KubeClient(opts.kubeconfig);
    else throw new TypeError("startInformer needs a kubeconfig or a client");
    this.path = resourcePath(opts);
    this.synced = new Promise((resolve, reject) => {
      this.resolveSynced = resolve;
      this.rejectSynced = reject;
    });
    this.synced.catch(() => {}); // stopping before the first list is not an unhandled rejection
    const resync = opts.resyncMs ?? DEFAULT_RESYNC_MS;
    if (resync > 0) {
      this.resyncTimer = setInterval(() => this.resync(), resync);
      this.resyncTimer.unref();
    }
    this.loopDone = this.loop();
  }

  hasSynced(): boolean {
    return this.isSynced;
  }

  healthy(): boolean {
    const silence = this.opts.silenceTimeoutMs ?? DEFAULT_SILENCE_MS;
    return this.current === "watching" && this.lastActivity !== undefined && Date.now() - this.lastActivity <= silence;
  }

  state(): InformerState {
    return this.current;
  }

  lastEventAt(): number | undefined {
    return this.lastActivity;
  }

  disconnectedSince(): number | undefined {
    return this.current === "watching" ? undefined : this.disconnectedAt;
  }

  restarts(): number {
    return Math.max(0, this.watchStarts - 1);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.cache.get(namespace ? `${namespace}/${name}` : name);
  }

  list(namespace?: string): T[] {
    const all = [...this.cache.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  async stop(): Promise<void> {
    if (this.stopped) return this.loopDone;
    this.stopped = true;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.abortWatch?.();
    this.wake?.();
    if (!this.isSynced) this.rejectSynced(new Error(`informer ${this.path} stopped before its first list`));
    await this.loopDone;
  }

  private setState(s: InformerState): void {
    if (s === this.current) return;
    if (this.current === "watching") this.disconnectedAt = Date.now();
    this.current = s;
    this.safely(() => this.opts.onStateChange?.(s), "onStateChange");
  }

  private report(err: unknown, context: string): void {
    try {
      this.opts.onError?.(err, context);
    } catch {
      // a failing error reporter must not stop the informer either
    }
  }

  private safely(fn: () => void, context: string): void {
    try {
      fn();
    } catch (e) {
      this.report(e, `${context} callback threw`);
    }
  }

  private emit(type: InformerEventType, obj: T, old?: T): void {
    this.safely(() => this.opts.onEvent(type, obj, old), type);
  }

  private async loop(): Promise<void> {
    let failures = 0;
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) {
          this.setState("listing");
          await this.relist();
          needList = false;
        }
        if (this.stopped) break;
        const started = Date.now();
        const before = this.lastActivity;
        const outcome = await this.watchOnce();
        if (this.stopped || outcome.kind === "stopped") break;
        if (outcome.kind === "gone") {
          needList = true;
          continue;
        }
        if (outcome.kind === "silent") {
          // The watchdog already waited: resume at once (a reconnect from the last resourceVersion).
          // A quiet cluster is not a failure: nothing is reported (the state moves are, at debug).
          continue;
        }
        if (outcome.kind === "closed") {
          const quiet = this.lastActivity === before && Date.now() - started < MIN_HEALTHY_WATCH_MS;
          if (!quiet) {
            failures = 0;
            continue;
          }
          failures += 1;
        } else {
          failures += 1;
          this.report(outcome.err, `watch ${this.path}`);
        }
      } catch (err) {
        failures += 1;
        this.report(err, `list ${this.path}`);
      }
      if (this.stopped) break;
      this.setState("backoff");
      await this.sleep(backoffDelay(failures, this.opts.backoff ?? WATCH_BACKOFF));
    }
    this.setState("stopped");
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
    });
  }

  /** Lists every page, replaces the cache and delivers the differences. */
  private async relist(): Promise<void> {
    const fresh = new Map<string, T>();
    let cont: string | undefined;
    let rv = "";
    do {
      const page = await this.client.request<KubeList<T>>("GET", this.path, {
        query: { limit: this.opts.pageSize ?? 500, continue: cont, labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector },
      });
      for (const item of Array.isArray(page?.items) ? page.items : []) if (isKubeObject(item)) fresh.set(objectKey(item), item as T);
      cont = page?.metadata?.continue || undefined;
      rv = page?.metadata?.resourceVersion ?? rv;
    } while (cont && !this.stopped);
    if (this.stopped) return;
    const old = this.cache;
    this.cache = fresh;
    this.rv = rv;
    this.lastActivity = Date.now();
    for (const [key, obj] of fresh) {
      const before = old.get(key);
      if (!before) this.emit("added", obj);
      else if (before.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit("modified", obj, before);
    }
    for (const [key, obj] of old) if (!fresh.has(key)) this.emit("deleted", obj);
    if (!this.isSynced) {
      this.isSynced = true;
      this.resolveSynced();
    }
  }

  private resync(): void {
    if (!this.isSynced || this.stopped) return;
    for (const obj of [...this.cache.values()]) this.emit("resync", obj);
  }

  private watchOnce(): Promise<Outcome> {
    const silence = this.opts.silenceTimeoutMs ?? DEFAULT_SILENCE_MS;
    const timeouts = this.opts.watchTimeoutSeconds ?? { min: 300, max: 600 };
    return new Promise<Outcome>((resolve) => {
      let finished = false;
      let handle: WatchHandle | undefined;
      const finish = (o: Outcome) => {
        if (finished) return;
        finished = true;
        clearInterval(dog);
        this.abortWatch = undefined;
        handle?.abort();
        resolve(o);
      };
      this.abortWatch = () => finish({ kind: "stopped" });
      let watchStart = Date.now();
      const dog = setInterval(
        () => {
          const last = Math.max(this.lastActivity ?? 0, watchStart);
          if (Date.now() - last > silence) finish({ kind: "silent" });
        },
        Math.max(10, Math.min(silence / 4, 5000)),
      );
      dog.unref();
      const classify = (err: unknown): Outcome => (err == null ? { kind: "closed" } : statusOf(err) === 410 ? { kind: "gone" } : { kind: "error", err });
      this.watchStarts += 1;
      this.client
        .watch(
          this.path,
          {
            resourceVersion: this.rv || undefined,
            allowWatchBookmarks: true,
            timeoutSeconds: randomBetween(timeouts.min, timeouts.max),
            labelSelector: this.opts.labelSelector,
            fieldSelector: this.opts.fieldSelector,
          },
          (type, object) => {
            if (finished) return;
            const o = this.onWatchEvent(type, object);
            if (o) finish(o);
          },
          (err) => finish(classify(err)),
        )
        .then((h) => {
          handle = h;
          if (finished) h.abort();
          else {
            // The server answered: it is alive (a quiet collection may send no bookmark at all).
            watchStart = Date.now();
            this.lastActivity = watchStart;
            this.setState("watching");
          }
        })
        .catch((err: unknown) => finish(classify(err)));
    });
  }

  /** Applies one watch event to the cache; an outcome ends the watch. */
  private onWatchEvent(type: string, object: unknown): Outcome | undefined {
    if (type === "ERROR") {
      const code = statusOf(object);
      if (code === 410) return { kind: "gone" };
      const message = (object as { message?: unknown } | null)?.message;
      return { kind: "error", err: new Error(`watch ERROR event${code ? ` (${code})` : ""}: ${typeof message === "string" ? message : "no message"}`) };
    }
    if (type === "BOOKMARK") {
      const rv = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
      if (typeof rv === "string" && rv !== "") this.rv = rv;
      this.lastActivity = Date.now();
      return undefined;
    }
    if (!isKubeObject(object)) {
      this.report(new Error(`a ${type} event without an object`), `watch ${this.path}`);
      return undefined;
    }
    this.lastActivity = Date.now();
    const obj = object as T;
    if (obj.metadata.resourceVersion) this.rv = obj.metadata.resourceVersion;
    const key = objectKey(obj);
    if (type === "ADDED" || type === "MODIFIED") {
      const before = this.cache.get(key);
      this.cache.set(key, obj);
      if (!before) this.emit("added", obj);
      else if (before.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit("modified", obj, before);
    } else if (type === "DELETED") {
      const before = this.cache.get(key);
      this.cache.delete(key);
      this.emit("deleted", obj, before);
    }
    return undefined;
  }
}

/**
 * Starts a supervised informer of `opts.group/version/plural` (in `opts.namespace`, or every
 * namespace): see the module comment. Returns at once; await `synced` for the first list.
 */
export function startInformer<T extends KubeObject = KubeObject>(opts: InformerOptions<T>): Informer<T> {
  return new SupervisedInformer<T>(opts);
}
