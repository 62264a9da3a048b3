/**
 * Self-contained copies of Writ schemas: every `$ref` replaced by a copy of its target, `$defs`
 * and nested `$id`s dropped. For consumers that cannot follow references across documents:
 * the CRD generator (Kubernetes structural schemas have no `$ref`) and OpenAPI output.
 *
 * A `$ref` whose siblings are only annotations (description, title, ...) is merged into its
 * target, the sibling annotations winning; otherwise the target is added to `allOf`.
 */
import { DRAFT_2020_12 } from "./common.js";
import { SCHEMA_URIS, isSchemaName, resolveSchemaUri, type SchemaName } from "./registry.js";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type SchemaNode = { [k: string]: Json };

/** Keywords whose value is a map of name -> subschema. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "dependentSchemas"]);
/** Keywords whose value is one subschema. */
const SCHEMA_SINGLE = new Set([
  "items",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "additionalProperties",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
]);
/** Keywords whose value is a list of subschemas. */
const SCHEMA_LISTS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** Keywords dropped from a self-contained copy. */
const DROPPED = new Set(["$id", "$schema", "$defs", "$ref"]);
/** Keywords that only annotate; a `$ref` sibling made only of these merges into the target. */
const ANNOTATIONS = new Set(["description", "title", "$comment", "default", "examples", "deprecated"]);

const isNode = (v: unknown): v is SchemaNode => typeof v === "object" && v !== null && !Array.isArray(v);

function copyValue(v: unknown): Json {
  return structuredClone(v) as Json;
}

function inlineNode(node: unknown, refStack: readonly string[]): Json {
  if (!isNode(node)) return copyValue(node);
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key)) continue;
    if (SCHEMA_MAPS.has(key) && isNode(value)) {
      const map: SchemaNode = {};
      for (const [name, sub] of Object.entries(value)) map[name] = inlineNode(sub, refStack);
      out[key] = map;
    } else if (SCHEMA_SINGLE.has(key)) {
      out[key] = inlineNode(value, refStack);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((sub) => inlineNode(sub, refStack));
    } else {
      out[key] = copyValue(value);
    }
  }
  const ref = node.$ref;
  if (typeof ref !== "string") return out;
  if (refStack.includes(ref)) throw new Error(`schema reference cycle through ${ref}`);
  const target = resolveSchemaUri(ref);
  if (target === undefined) throw new Error(`unresolvable schema reference ${ref}`);
  const resolved = inlineNode(target, [...refStack, ref]);
  if (!isNode(resolved)) return { ...out, allOf: [resolved] };
  const clash = Object.keys(out).some((k) => !ANNOTATIONS.has(k) && k in resolved);
  if (!clash) return { ...resolved, ...out };
  const allOf = Array.isArray(out.allOf) ? out.allOf : [];
  return { ...out, allOf: [...allOf, resolved] };
}

/**
 * A deep, self-contained copy of the named schema: no `$ref`, no `$defs`, no `$id`; the
 * root keeps `$schema`. Throws on an unresolvable or cyclic reference (none exist today).
 */
export function inlinedSchemaFor(name: SchemaName): Record<string, unknown> {
  if (!isSchemaName(name)) throw new TypeError(`unknown schema name: ${String(name)}`);
  const uri = SCHEMA_URIS[name];
  const root = resolveSchemaUri(uri);
  if (root === undefined) throw new Error(`schema ${uri} is not registered`);
  const body = inlineNode(root, [uri]) as SchemaNode;
  return { $schema: DRAFT_2020_12, ...body };
}
