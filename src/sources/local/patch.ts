/**
 * The two patch formats the local API server accepts, as the Kubernetes API server applies
 * them: JSON merge patch (RFC 7386) and JSON patch (RFC 6902: add, remove, replace, test, move,
 * copy). Pure: the target is never mutated; a patch that cannot apply throws `PatchError`.
 */

import { canonicalJson } from "../../core/canonical/index.js";

/** A patch that does not apply (a bad path, a failed test, a malformed body). */
export class PatchError extends Error {
  override readonly name = "PatchError";
  readonly code = "PATCH_INVALID";
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** True when `a` and `b` are the same JSON value (member order aside). */
export function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}

/** Sets an own member (also one named `__proto__`, which plain assignment would not create). */
function setOwn(o: Obj, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** RFC 7386: `patch` merged into `target` (null removes a member; a non-object replaces). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setOwn(out, k, mergePatch(Object.hasOwn(out, k) ? out[k] : undefined, v));
  }
  return out;
}

/** The reference tokens of a JSON pointer (RFC 6901). */
function tokens(pointer: unknown): string[] {
  if (typeof pointer !== "string" || (pointer !== "" && !pointer.startsWith("/"))) throw new PatchError(`not a JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function arrayIndex(token: string, length: number, forInsert: boolean): number {
  if (forInsert && token === "-") return length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new PatchError(`not an array index: ${token}`);
  const i = Number(token);
  if (i > length || (!forInsert && i === length)) throw new PatchError(`array index ${i} out of range`);
  return i;
}

function get(doc: unknown, path: string[]): unknown {
  let cur = doc;
  for (const t of path) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(t, cur.length, false)];
    else if (isObj(cur) && Object.hasOwn(cur, t)) cur = cur[t];
    else throw new PatchError(`no value at /${path.join("/")}`);
  }
  return cur;
}

/** Applies one change at `path` of `doc` (mutated; `doc` is a working copy). Returns the new root. */
function change(doc: unknown, path: string[], op: "add" | "remove" | "replace", value?: unknown): unknown {
  if (path.length === 0) {
    if (op === "remove") throw new PatchError("cannot remove the whole document");
    return value;
  }
  const parent = get(doc, path.slice(0, -1));
  const last = path[path.length - 1] as string;
  if (Array.isArray(parent)) {
    const i = arrayIndex(last, parent.length, op === "add");
    if (op === "add") parent.splice(i, 0, value);
    else if (op === "remove") parent.splice(i, 1);
    else parent[i] = value;
  } else if (isObj(parent)) {
    if (op !== "add" && !Object.hasOwn(parent, last)) throw new PatchError(`no value at /${path.join("/")}`);
    if (op === "remove") delete parent[last];
    else setOwn(parent, last, value);
  } else {
    throw new PatchError(`no container at /${path.slice(0, -1).join("/")}`);
  }
  return doc;
}

/** RFC 6902: the operations of `ops` applied in order to a copy of `target`. */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new PatchError("a JSON patch is an array of operations");
  let doc = structuredClone(target);
  for (const raw of ops) {
    if (!isObj(raw)) throw new PatchError("a JSON patch operation is an object");
    const path = tokens(raw.path);
    switch (raw.op) {
      case "add":
      case "replace":
        if (!("value" in raw)) throw new PatchError(`${raw.op} needs a value`);
        doc = change(doc, path, raw.op, structuredClone(raw.value));
        break;
      case "remove":
        doc = change(doc, path, "remove");
        break;
      case "test":
        if (!sameJson(get(doc, path), raw.value)) throw new PatchError(`test failed at ${String(raw.path)}`);
        break;
      case "move":
      case "copy": {
        const from = tokens(raw.from);
        const value = structuredClone(get(doc, from));
        if (raw.op === "move") doc = change(doc, from, "remove");
        doc = change(doc, path, "add", value);
        break;
      }
      default:
        throw new PatchError(`unknown JSON patch op ${JSON.stringify(raw.op)}`);
    }
  }
  return doc;
}
