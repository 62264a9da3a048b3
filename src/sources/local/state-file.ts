/**
 * The local API server's state on disk (`writ dev`: `.writ/local-resources.json`), so a restart
 * resumes where it stopped: resources keep their uid, generation, finalizers, record-id
 * annotations and status, and a manifest removed while `writ dev` was stopped is still seen as
 * a deletion (and revoked) at the next start.
 *
 * Format (version 1): `{version: 1, store: {resourceVersion, objects: [{plural, object}]},
 * sources: [[key, file], ...]}`. Written atomically (a temporary file renamed over it), at most
 * every `delayMs` after a change. A missing file is a fresh start; a malformed one is reported
 * by `readLocalState` as a problem (and then replaced).
 */
import { readFile, rename, writeFile } from "node:fs/promises";
import { isKubeObject } from "../kubernetes/index.js";
import type { StoreSnapshot } from "./object-store.js";

/** What is persisted. */
export interface LocalState {
  version: 1;
  store: StoreSnapshot;
  sources: [string, string][];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function check(v: unknown): LocalState | undefined {
  if (!isObj(v) || v.version !== 1 || !isObj(v.store) || !Array.isArray(v.sources)) return undefined;
  const rv = v.store.resourceVersion;
  const objects = v.store.objects;
  if (typeof rv !== "number" || !Number.isSafeInteger(rv) || rv < 0 || !Array.isArray(objects)) return undefined;
  if (!objects.every((o) => isObj(o) && typeof o.plural === "string" && isKubeObject(o.object))) return undefined;
  if (!v.sources.every((s) => Array.isArray(s) && s.length === 2 && s.every((x) => typeof x === "string"))) return undefined;
  return v as unknown as LocalState;
}

/** The state in `file`: undefined when there is none, or a problem when it is malformed. */
export async function readLocalState(file: string): Promise<{ state?: LocalState; problem?: string }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    return { problem: `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: `${file} is not valid JSON; starting afresh` };
  }
  const state = check(json);
  return state ? { state } : { problem: `${file} is not a local resources file (version 1); starting afresh` };
}

/** Writes the state of `get()` to `file` at most every `delayMs` after `schedule()`. */
export class StateWriter {
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly get: () => LocalState,
    private readonly onError: (err: unknown) => void,
    private readonly delayMs = 200,
  ) {}

  /** A change happened: write soon. */
  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.write();
    }, this.delayMs);
    this.timer.unref();
  }

  /** Writes now (pending changes included) and waits for it. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.write();
  }

  private write(): Promise<void> {
    this.writing = this.writing.then(async () => {
      const tmp = `${this.file}.tmp`;
      try {
        await writeFile(tmp, JSON.stringify(this.get()) + "\n");
        await rename(tmp, this.file);
      } catch (err) {
        this.onError(err);
      }
    });
    return this.writing;
  }
}
