/**
 * Structural defaulting, as the Kubernetes API server does it for Writ's CRDs: a member that is
 * absent where the CRD's schema declares a `default` gets that default, recursively through
 * `properties`, `items` and `additionalProperties` of the values present. Pure. (Pruning of
 * unknown fields is NOT done: the controller then refuses them by name, as kubectl's client-side
 * validation would.)
 */
import { WRIT_KINDS, crdFor, type StructuralSchema } from "../../core/crd/index.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** `value` with the defaults of `schema` filled in (a copy; `value` is not mutated). */
export function withDefaults(value: unknown, schema: StructuralSchema | undefined): unknown {
  if (!schema) return value;
  if (Array.isArray(value)) return schema.items ? value.map((v) => withDefaults(v, schema.items)) : value;
  if (!isObj(value)) return value;
  const out: Obj = { ...value };
  const props = schema.properties ?? {};
  for (const [k, v] of Object.entries(out)) {
    const child = Object.hasOwn(props, k) ? props[k] : schema.additionalProperties;
    if (child) Object.defineProperty(out, k, { value: withDefaults(v, child), enumerable: true, writable: true, configurable: true });
  }
  for (const [k, child] of Object.entries(props)) {
    if (!Object.hasOwn(out, k) && child.default !== undefined) out[k] = withDefaults(structuredClone(child.default), child);
  }
  return out;
}

let specSchemas: Map<string, StructuralSchema | undefined> | undefined;

/** The structural schema of `spec` of the Writ kind `kind` (Delegation, ...), or undefined for another kind. */
export function specSchemaOf(kind: string): StructuralSchema | undefined {
  specSchemas ??= new Map(WRIT_KINDS.map((k) => [k.kind, crdFor(k).spec.versions[0]?.schema.openAPIV3Schema.properties?.spec]));
  return specSchemas.get(kind);
}
