/**
 * Local manifests as a source of declarations (the embedded default of `writ dev`): a folder
 * of Delegation, IntentAgreement and Subscription manifests is applied to an in-memory API
 * server (./api-server.ts), and the reconcilers the caller starts on that server store them
 * (`writ dev` passes the controller's own, src/dev/local-controller.ts: they store in Postgres
 * exactly as `writ controller` does on a cluster).
 *
 * Promises:
 * - The folder is watched (`fs.watch`, debounced) and re-read every `rescanMs` as a safety net;
 *   each change is applied as `kubectl apply` + prune would (./sync.ts): an edit bumps the
 *   generation and reconciles; `spec.state: revoked` revokes the record; a resource no file
 *   declares any more is deleted through the finalizer (revoked, rows kept). Syncs never
 *   overlap: changes during a sync cause one more.
 * - Every namespace the manifests use is labelled `writ.dev/org-id: <orgId>` (when `orgId` is
 *   given; otherwise resources are refused NAMESPACE_NOT_BOUND, as in an unlabelled namespace).
 * - One line per change of a resource's Ready condition (`Kind ns/name: Ready=True Reason:
 *   message`), per Revoked/Logged event, per removal, per unusable file (once while it stays
 *   unusable), and a summary after the first sync and every sync that changed something.
 * - With `stateFile`, the resources survive restarts (./state-file.ts).
 */
import { watch, type FSWatcher } from "node:fs";
import { dirname } from "node:path";
import { ORG_LABEL, type KubeObject } from "../kubernetes/index.js";
import { LocalApiServer, type PostedEvent } from "./api-server.js";
import { isManifestFileName, type ManifestObject } from "./manifests.js";
import { KIND_OF_PLURAL, LocalObjectStore } from "./object-store.js";
import { readLocalState, StateWriter } from "./state-file.js";
import { ManifestSync, type SyncResult } from "./sync.js";

export { LocalApiServer, type LocalApiServerOptions, type PostedEvent } from "./api-server.js";
export { LocalObjectStore, storeKey, type StoreHooks, type StoreSnapshot } from "./object-store.js";
export { parseManifestFile, scanFolder, type FileScan, type ManifestObject } from "./manifests.js";
export { ManifestSync, type SyncResult } from "./sync.js";

/** Options of `startLocalManifests`. */
export interface LocalManifestsOptions {
  /** The folder of manifests. */
  dir: string;
  /** The organization every namespace is bound to; undefined: none is bound. */
  orgId: string | undefined;
  /** Starts the reconcilers that store the resources, with `api` as their API server (after the first sync); stopped with the source. */
  startReconcilers(api: LocalApiServer): Promise<Reconcilers>;
  /** Where lines go. */
  print(line: string): void;
  /** Persist the resources here (see ./state-file.ts). */
  stateFile?: string;
  /** Runs before each sync applies anything (e.g. registers the agents the manifests name). */
  beforeApply?(objects: ManifestObject[]): Promise<void>;
  /** Quiet time after a file event before syncing (default 200 ms). */
  debounceMs?: number;
  /** Re-read the folder this often regardless of events (default 5000 ms; 0: never). */
  rescanMs?: number;
}

/** Running reconcilers (see `startReconcilers`). */
export interface Reconcilers {
  stop(): Promise<void>;
}

/** A running local source. */
export interface LocalManifests {
  readonly store: LocalObjectStore;
  readonly api: LocalApiServer;
  readonly reconcilers: Reconcilers;
  /** Syncs now (after any sync in progress); resolves with its result. */
  sync(): Promise<SyncResult>;
  stop(): Promise<void>;
}

const kindOf = (plural: string) => KIND_OF_PLURAL.get(plural) ?? plural;
const nameOf = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;

function readyLine(plural: string, o: KubeObject): string | undefined {
  const conditions = (o.status as { conditions?: unknown } | undefined)?.conditions;
  const ready = Array.isArray(conditions)
    ? (conditions as { type?: unknown; status?: unknown; reason?: unknown; message?: unknown }[]).find((c) => c.type === "Ready")
    : undefined;
  if (!ready) return undefined;
  return `${kindOf(plural)} ${nameOf(o)}: Ready=${String(ready.status)} ${String(ready.reason)}: ${String(ready.message)}`;
}

/** Starts the local source (see the module comment). */
export async function startLocalManifests(opts: LocalManifestsOptions): Promise<LocalManifests> {
  const { print } = opts;
  const loaded = opts.stateFile ? await readLocalState(opts.stateFile) : {};
  if (loaded.problem) print(`manifests: ${loaded.problem}`);
  const lastReady = new Map<string, string>();
  let writer: StateWriter | undefined;
  const store = new LocalObjectStore({
    ...(loaded.state ? { initial: loaded.state.store } : {}),
    hooks: {
      onStatus: (plural, o) => {
        const line = readyLine(plural, o);
        const key = `${plural}/${nameOf(o)}`;
        if (line && lastReady.get(key) !== line) {
          lastReady.set(key, line);
          print(line);
        }
      },
      onRemoved: (plural, o) => {
        lastReady.delete(`${plural}/${nameOf(o)}`);
        print(`${kindOf(plural)} ${nameOf(o)}: removed (no manifest declares it any more)`);
      },
      onChange: () => writer?.schedule(),
    },
  });
  const sync = new ManifestSync({ dir: opts.dir, store, sources: loaded.state?.sources ?? [], ...(opts.beforeApply ? { beforeApply: opts.beforeApply } : {}) });
  if (opts.stateFile) {
    writer = new StateWriter(
      opts.stateFile,
      () => ({ version: 1, store: store.snapshot(), sources: sync.sources() }),
      (err) => print(`manifests: cannot save ${opts.stateFile}: ${String(err)}`),
    );
  }
  const onEvent = (e: PostedEvent) => {
    if (e.reason === "Revoked" || e.reason === "Logged")
      print(`${e.involvedObject.kind ?? "?"} ${e.namespace}/${e.involvedObject.name ?? "?"}: ${e.reason}: ${e.message}`);
  };
  const labels: Record<string, string> = opts.orgId ? { [ORG_LABEL]: opts.orgId } : {};
  const api = new LocalApiServer({ store, namespaceLabels: () => ({ ...labels }), onEvent });

  let running: Promise<SyncResult> | undefined;
  let again = false;
  // A broken file is re-read at every rescan: report each problem (and note) once while it lasts.
  let reported = new Set<string>();
  let first = true;
  const runSync = async (): Promise<SyncResult> => {
    const r = await sync.run();
    const now = new Set([...r.problems, ...r.notes]);
    for (const line of now) if (!reported.has(line)) print(`manifests: ${line}`);
    reported = now;
    if (first || r.created.length + r.configured.length + r.deleted.length > 0) {
      print(`manifests: ${opts.dir}: ${r.objects.length} declared; ${r.created.length} created, ${r.configured.length} changed, ${r.deleted.length} deleted`);
    }
    if (first && r.elsewhere.length > 0) {
      const folders = [...new Set(r.elsewhere.map((e) => dirname(e.file)))].join(", ");
      print(
        `manifests: ${r.elsewhere.length} resource(s) declared in another folder (${folders}) are kept as they are, NOT revoked: ` +
          `${r.elsewhere.map((e) => e.key).join(", ")}. To revoke them, point WRIT_MANIFESTS_DIR back there and delete their manifests; to start afresh, remove .writ`,
      );
    }
    first = false;
    return r;
  };
  const syncNow = (): Promise<SyncResult> => {
    if (running) {
      again = true;
      return running.then(() => syncNow());
    }
    running = runSync().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        void syncNow().catch((err: unknown) => print(`manifests: sync failed: ${String(err)}`));
      }
    });
    return running;
  };

  await syncNow();
  const reconcilers = await opts.startReconcilers(api);

  let debounce: NodeJS.Timeout | undefined;
  const changed = () => {
    if (debounce) clearTimeout(debounce);
    debounce = setTimeout(() => {
      debounce = undefined;
      syncNow().catch((err: unknown) => print(`manifests: sync failed: ${String(err)}`));
    }, opts.debounceMs ?? 200);
  };
  let fsWatcher: FSWatcher | undefined;
  try {
    fsWatcher = watch(opts.dir, (_event, name) => {
      if (name === null || isManifestFileName(String(name))) changed();
    });
    fsWatcher.on("error", (err) => print(`manifests: watching ${opts.dir} failed (${err.message}); re-reading every ${opts.rescanMs ?? 5000} ms`));
  } catch (err) {
    print(`manifests: cannot watch ${opts.dir} (${err instanceof Error ? err.message : String(err)}); re-reading every ${opts.rescanMs ?? 5000} ms`);
  }
  const rescanMs = opts.rescanMs ?? 5000;
  const rescan = rescanMs > 0 ? setInterval(changed, rescanMs) : undefined;
  rescan?.unref();

  return {
    store,
    api,
    reconcilers,
    sync: syncNow,
    async stop() {
      fsWatcher?.close();
      if (rescan) clearInterval(rescan);
      if (debounce) clearTimeout(debounce);
      await running?.catch(() => {});
      await reconcilers.stop();
      await writer?.flush();
    },
  };
}
