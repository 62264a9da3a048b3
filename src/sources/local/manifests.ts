/**
 * Reading a folder of manifests: every `*.yaml`, `*.yml` and `*.json` file directly in it
 * (not in sub-folders; hidden and editor backup files skipped), each holding one or more YAML
 * documents, as `kubectl apply -f <folder>` reads them.
 *
 * Promises: `parseManifestFile` is pure. A file that cannot be used as a whole (unreadable,
 * empty, over 1 MiB, a YAML error, a Writ document without a valid name or spec) is reported as ONE
 * problem naming the file (and the line for YAML errors) and yields no objects: the caller keeps
 * what that file declared before, so a half-saved file never deletes anything. Documents of
 * other kinds are skipped with a note. `metadata.namespace` defaults to `default`.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { LineCounter, parseAllDocuments } from "yaml";
import type { KubeObject } from "../kubernetes/index.js";
import { KIND_OF_PLURAL, LOCAL_API_VERSION } from "./object-store.js";

/** One Writ resource a file declares. */
export interface ManifestObject {
  file: string;
  plural: string;
  object: KubeObject;
}

/** What one file gave: its objects (and notes), or why it cannot be used. */
export type FileScan = { file: string; ok: true; objects: ManifestObject[]; notes: string[] } | { file: string; ok: false; problem: string };

/** Largest manifest file read. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const PLURAL_OF_KIND = new Map([...KIND_OF_PLURAL].map(([plural, kind]) => [kind, plural]));

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** True for a file name the folder scan reads. */
export function isManifestFileName(name: string): boolean {
  return !name.startsWith(".") && !name.endsWith("~") && /\.(ya?ml|json)$/i.test(name);
}

function stringMap(v: unknown): Record<string, string> | undefined | false {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v) || !Object.values(v).every((x) => typeof x === "string")) return false;
  return v as Record<string, string>;
}

/** The Writ object of document `n` of `file`, a note (another kind), or a problem. */
function documentOf(file: string, n: number, doc: unknown): { object?: ManifestObject; note?: string; problem?: string } {
  const where = `document ${n + 1}`;
  if (!isObj(doc)) return { problem: `${where} is not a mapping` };
  const plural = typeof doc.kind === "string" ? PLURAL_OF_KIND.get(doc.kind) : undefined;
  if (doc.apiVersion !== LOCAL_API_VERSION || !plural) {
    return {
      note: `${where} (${String(doc.apiVersion)} ${String(doc.kind)}) skipped: only ${LOCAL_API_VERSION} ${[...PLURAL_OF_KIND.keys()].join(", ")} are served locally`,
    };
  }
  const meta = isObj(doc.metadata) ? doc.metadata : {};
  const name = meta.name;
  if (typeof name !== "string" || name.length > 253 || !DNS_SUBDOMAIN.test(name))
    return { problem: `${where} (${doc.kind}): metadata.name must be a lowercase DNS name` };
  const namespace = meta.namespace ?? "default";
  if (typeof namespace !== "string" || !DNS_LABEL.test(namespace))
    return { problem: `${where} (${doc.kind} ${name}): metadata.namespace must be a lowercase DNS label` };
  if (!isObj(doc.spec)) return { problem: `${where} (${doc.kind} ${name}): spec must be a mapping` };
  const labels = stringMap(meta.labels);
  const annotations = stringMap(meta.annotations);
  if (labels === false || annotations === false) return { problem: `${where} (${doc.kind} ${name}): labels and annotations must map strings to strings` };
  const object: KubeObject = {
    apiVersion: LOCAL_API_VERSION,
    kind: doc.kind as string,
    metadata: { name, namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
    spec: doc.spec,
  };
  return { object: { file, plural, object } };
}

/** Parses the text of `file` (see the module comment). */
export function parseManifestFile(file: string, text: string): FileScan {
  // What an editor that truncates before it writes leaves for a moment: not a file that
  // declares nothing (which would delete, and so revoke, what it declared).
  if (text.length === 0) return { file, ok: false, problem: "the file is empty (being saved?); to withdraw what it declared, delete the file" };
  const lineCounter = new LineCounter();
  let docs;
  try {
    docs = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  } catch (err) {
    return { file, ok: false, problem: `cannot parse: ${err instanceof Error ? err.message : String(err)}` };
  }
  const list = Array.isArray(docs) ? docs : [docs];
  const objects: ManifestObject[] = [];
  const notes: string[] = [];
  for (const [n, d] of list.entries()) {
    const error = d.errors[0];
    if (error) {
      const line = error.pos[0] !== undefined ? lineCounter.linePos(error.pos[0]).line : undefined;
      return { file, ok: false, problem: `YAML error${line !== undefined ? ` at line ${line}` : ""}: ${error.message.split("\n")[0] ?? error.code}` };
    }
    let value: unknown;
    try {
      value = d.toJS({ maxAliasCount: 100 });
    } catch (err) {
      return { file, ok: false, problem: `document ${n + 1}: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (value === null || value === undefined) continue; // an empty document (e.g. after a trailing ---)
    const r = documentOf(file, n, value);
    if (r.problem) return { file, ok: false, problem: r.problem };
    if (r.note) notes.push(r.note);
    if (r.object) objects.push(r.object);
  }
  return { file, ok: true, objects, notes };
}

/** Reads and parses every manifest file of `dir`, in name order. Throws when `dir` cannot be listed. */
export async function scanFolder(dir: string): Promise<FileScan[]> {
  const names = (await readdir(dir)).filter(isManifestFileName).sort();
  const out: FileScan[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      const info = await stat(file);
      if (!info.isFile()) continue;
      if (info.size > MAX_MANIFEST_BYTES) {
        out.push({ file, ok: false, problem: `larger than ${MAX_MANIFEST_BYTES} bytes` });
        continue;
      }
      out.push(parseManifestFile(file, await readFile(file, "utf8")));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") continue; // removed between the listing and the read
      out.push({ file, ok: false, problem: `cannot read: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
  return out;
}
