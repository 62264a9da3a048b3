/**
 * The shapes of Kubernetes objects this package reads (only the members it uses; everything
 * else is carried through untouched) and the REST paths of resources.
 */

/** `metadata` of an object. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  [key: string]: unknown;
}

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** A list answer: `items` and the list's resourceVersion (and `continue` for paging). */
export interface KubeList<T extends KubeObject = KubeObject> {
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** Which resource: group ("" for the core group), version, plural, and optionally a namespace. */
export interface ResourceRef {
  group: string;
  version: string;
  plural: string;
  /** Omitted: every namespace (a list or watch), or a cluster-scoped resource. */
  namespace?: string;
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function segment(kind: string, v: string): string {
  if (!SEGMENT.test(v) || v.length > 253) throw new TypeError(`invalid ${kind} in a Kubernetes path: ${JSON.stringify(v)}`);
  return v;
}

/**
 * The REST path of `ref` (a collection), or of one object when `name` is given, or of its
 * `subresource` (`status`). Every segment is checked, so a hostile name cannot reach another path.
 */
export function resourcePath(ref: ResourceRef, name?: string, subresource?: string): string {
  const base = ref.group === "" ? `/api/${segment("version", ref.version)}` : `/apis/${segment("group", ref.group)}/${segment("version", ref.version)}`;
  const ns = ref.namespace !== undefined ? `/namespaces/${segment("namespace", ref.namespace)}` : "";
  let path = `${base}${ns}/${segment("plural", ref.plural)}`;
  if (name !== undefined) path += `/${segment("name", name)}`;
  if (subresource !== undefined) path += `/${segment("subresource", subresource)}`;
  return path;
}

/** `namespace/name` of an object (just `name` when cluster-scoped): the key of caches and queues. */
export function objectKey(obj: { metadata: { name: string; namespace?: string } }): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : obj.metadata.name;
}

/** Splits a key of `objectKey` back into namespace and name. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const i = key.indexOf("/");
  return i < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** True when `v` looks like a Kubernetes object (an object with metadata.name). */
export function isKubeObject(v: unknown): v is KubeObject {
  if (typeof v !== "object" || v === null) return false;
  const m = (v as { metadata?: unknown }).metadata;
  return typeof m === "object" && m !== null && typeof (m as { name?: unknown }).name === "string";
}
