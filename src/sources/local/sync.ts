/**
 * Applying a folder of manifests to the local object store, as `kubectl apply -f <folder>`
 * followed by deleting what the folder no longer declares (`--prune`).
 *
 * Rules:
 * - Every resource a usable file declares is applied (created, or its spec, labels and
 *   annotations updated: a spec change bumps the generation, and the controller reconciles).
 * - A resource declared twice (same kind, namespace and name) is applied from the first file
 *   in name order; the others are reported.
 * - A file that cannot be used (./manifests.ts) changes nothing: what it declared before stays.
 * - A resource no file declares any more (its file removed, or its document removed) is
 *   DELETED like `kubectl delete`: with the controller's finalizer it is revoked (rows are
 *   kept) before it goes. Because deletion revokes for good, it is confirmed by a second read of
 *   the folder `confirmMs` later (a file caught mid-save is not taken for a deletion).
 * - A resource that came from ANOTHER folder (WRIT_MANIFESTS_DIR pointed elsewhere before) is
 *   not pruned: switching folders never revokes silently. It is kept as it is and listed in
 *   `elsewhere`, so the caller can say so.
 * - A manifest's own `writ.dev/record-id` annotation is ignored (the controller writes it).
 * - A new resource's uid is derived from its file identity (the file's absolute path, kind,
 *   namespace and name; `fileUid`), stable across restarts. Record ownership does not rest on
 *   it: a record's owner is the resource's kind, namespace and name (src/core/crd/owner.ts,
 *   src/store/record-owners.ts), as on a cluster.
 * The file each resource came from is remembered (and persisted with the store, ./state-file.ts).
 */
import { createHash } from "node:crypto";
import { dirname, resolve } from "node:path";
import type { FileScan, ManifestObject } from "./manifests.js";
import { scanFolder } from "./manifests.js";
import { storeKey, type LocalObjectStore } from "./object-store.js";
import type { KubeObject } from "../kubernetes/index.js";

/** What one sync did. */
export interface SyncResult {
  created: string[];
  configured: string[];
  deleted: string[];
  /** Resources this folder does not declare that came from another folder: kept, not pruned (key and file). */
  elsewhere: { key: string; file: string }[];
  /** One line per unusable file or duplicate. */
  problems: string[];
  /** Skipped documents of other kinds. */
  notes: string[];
  /** The objects applied. */
  objects: ManifestObject[];
}

/** Options of a ManifestSync. */
export interface ManifestSyncOptions {
  dir: string;
  store: LocalObjectStore;
  /** key -> file, from a previous run. */
  sources?: Iterable<[string, string]>;
  /** Runs before anything is applied (e.g. registers the agents the manifests name). */
  beforeApply?(objects: ManifestObject[]): Promise<void>;
  /** Delay of the confirming read before deletions (default 150 ms). */
  confirmMs?: number;
  /** Reads the folder (default `scanFolder`). */
  scan?(dir: string): Promise<FileScan[]>;
}

/** The uid of a resource declared in `file` under `key` (a UUID-shaped digest of both). */
export function fileUid(file: string, key: string): string {
  const h = createHash("sha256")
    .update(`writ local manifest\0${resolve(file)}\0${key}`)
    .digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The controller's record-id annotation (src/controller/kinds.ts): Writ writes it, a manifest never does. */
const RECORD_ID_ANNOTATION = "writ.dev/record-id";

/** `o` without a declared record-id annotation (ignored, as the admission webhook refuses it on a cluster). */
function withoutRecordId(o: KubeObject): KubeObject {
  const { [RECORD_ID_ANNOTATION]: _declared, ...annotations } = o.metadata.annotations ?? {};
  return o.metadata.annotations === undefined ? o : { ...o, metadata: { ...o.metadata, annotations } };
}

const keyOf = (o: ManifestObject) => storeKey(o.plural, o.object.metadata.namespace ?? "default", o.object.metadata.name);
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Desired {
  objects: Map<string, ManifestObject>;
  /** Keys declared by files that cannot be read now: left as they are. */
  keep: Set<string>;
  problems: string[];
  notes: string[];
}

/** Applies a folder to a store (see the module comment). */
export class ManifestSync {
  private readonly sourceOf: Map<string, string>;

  constructor(private readonly opts: ManifestSyncOptions) {
    this.sourceOf = new Map(opts.sources ?? []);
  }

  /** key -> file of every resource applied. */
  sources(): [string, string][] {
    return [...this.sourceOf.entries()];
  }

  /** The file `key` came from when it is not in this folder. */
  private elsewhere(key: string): string | undefined {
    const file = this.sourceOf.get(key);
    return file !== undefined && dirname(file) !== resolve(this.opts.dir) ? file : undefined;
  }

  private deleting(key: string): boolean {
    const [plural = "", namespace = "", name = ""] = key.split("/");
    return this.opts.store.get(plural, namespace, name)?.metadata.deletionTimestamp !== undefined;
  }

  private async desired(): Promise<Desired> {
    const files = await (this.opts.scan ?? scanFolder)(this.opts.dir);
    const out: Desired = { objects: new Map(), keep: new Set(), problems: [], notes: [] };
    const broken = new Set<string>();
    for (const f of files) {
      if (!f.ok) {
        broken.add(f.file);
        out.problems.push(`${f.file}: ${f.problem}; what it declared before is kept`);
        continue;
      }
      for (const n of f.notes) out.notes.push(`${f.file}: ${n}`);
      for (const o of f.objects) {
        const key = keyOf(o);
        const first = out.objects.get(key);
        if (first)
          out.problems.push(
            `${f.file}: ${o.object.kind} ${o.object.metadata.namespace}/${o.object.metadata.name} is also declared in ${first.file}; that one is applied`,
          );
        else out.objects.set(key, o);
      }
    }
    for (const [key, file] of this.sourceOf) if (broken.has(file) && !out.objects.has(key)) out.keep.add(key);
    return out;
  }

  /** Reads the folder and applies it (see the module comment). */
  async run(): Promise<SyncResult> {
    const d = await this.desired();
    const objects = [...d.objects.values()];
    await this.opts.beforeApply?.(objects);
    const result: SyncResult = { created: [], configured: [], deleted: [], elsewhere: [], problems: d.problems, notes: d.notes, objects };
    for (const [key, o] of d.objects) {
      const what = this.opts.store.apply(o.plural, withoutRecordId(o.object), { uid: fileUid(o.file, key) });
      this.sourceOf.set(key, o.file);
      if (what === "created") result.created.push(key);
      if (what === "configured") result.configured.push(key);
    }
    const undeclared = this.opts.store.keys().filter((k) => !d.objects.has(k) && !d.keep.has(k) && !this.deleting(k));
    for (const key of undeclared) {
      const file = this.elsewhere(key);
      if (file !== undefined) result.elsewhere.push({ key, file });
    }
    let gone = undeclared.filter((k) => this.elsewhere(k) === undefined);
    if (gone.length > 0) {
      await delay(this.opts.confirmMs ?? 150);
      const again = await this.desired();
      gone = gone.filter((k) => !again.objects.has(k) && !again.keep.has(k));
    }
    for (const key of gone) {
      const [plural = "", namespace = "", name = ""] = key.split("/");
      try {
        this.opts.store.delete(plural, namespace, name);
        result.deleted.push(key);
      } catch {
        // already gone
      }
      this.sourceOf.delete(key);
    }
    return result;
  }
}
