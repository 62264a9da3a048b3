/**
 * JSON Schema (draft 2020-12, as `inlinedSchemaFor` returns it: no `$ref`) -> a Kubernetes
 * structural schema (apiextensions.k8s.io/v1, valid on Kubernetes 1.20).
 *
 * Rules, in the order applied to each node:
 * - `if`/`then`/`else` are dropped, and so is an `allOf` made only of them (conditional rules
 *   are checked by the controller); any other `allOf` is refused.
 * - `oneOf`/`anyOf` are merged into one object (see `variants.ts`); `discriminator` is dropped.
 * - `const` becomes a one-value `enum`; a missing `type` is inferred from `enum` values;
 *   `type: [T, "null"]` becomes `type: T` with `nullable: true`.
 * - `additionalProperties: false` is dropped (the API server prunes unknown fields);
 *   `additionalProperties: true`, and an object with neither properties nor
 *   additionalProperties, become `x-kubernetes-preserve-unknown-fields: true`.
 * - `uniqueItems: true` on a list of scalars becomes `x-kubernetes-list-type: set`; on other
 *   lists it is dropped (Kubernetes refuses uniqueItems).
 * - A numeric `exclusiveMinimum`/`exclusiveMaximum` becomes the OpenAPI v3.0 pair
 *   (`minimum` + `exclusiveMinimum: true`).
 * - `not: {required: [...]}` is kept as value validation (its properties are added to the
 *   structural part, untyped, so a forbidden member such as a JWK's `d` is rejected rather
 *   than silently pruned); any other `not` is dropped.
 * - Annotations Kubernetes does not carry (`title`, `$comment`, `examples`, `$schema`, ...)
 *   are dropped. Every property must have a description.
 * - Any keyword not listed here is refused with `CrdError` UNSUPPORTED_KEYWORD, so a new
 *   schema feature cannot be lost silently.
 */
import { CrdError } from "./errors.js";
import type { Json, SchemaNode, StructuralSchema } from "./types.js";
import { flattenVariants, typeOf } from "./variants.js";

const isNode = (v: unknown): v is SchemaNode => typeof v === "object" && v !== null && !Array.isArray(v);

/** Keywords that carry over unchanged (when present). Order here is the output order. */
const COPIED = [
  "format",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
] as const;

/** Keywords dropped without a trace. */
const DROPPED = new Set(["title", "$comment", "$schema", "$id", "examples", "deprecated", "readOnly", "writeOnly", "discriminator", "if", "then", "else"]);

/** Every keyword the converter knows. */
const KNOWN = new Set([
  ...COPIED,
  ...DROPPED,
  "type",
  "description",
  "properties",
  "required",
  "items",
  "additionalProperties",
  "enum",
  "const",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "uniqueItems",
  "default",
  "nullable",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
]);

/** String formats Kubernetes 1.20 validates (k8s.io/kube-openapi strfmt) plus numeric ones. */
const FORMATS = new Set([
  "date-time",
  "datetime",
  "date",
  "duration",
  "byte",
  "password",
  "uri",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "cidr",
  "mac",
  "uuid",
  "uuid3",
  "uuid4",
  "uuid5",
  "int32",
  "int64",
  "float",
  "double",
]);

const SCALARS = new Set(["string", "integer", "number", "boolean"]);
const TYPES = new Set(["object", "array", ...SCALARS]);

/** Drops conditional-only `allOf` entries; refuses any other. */
function withoutConditionals(node: SchemaNode, path: string): SchemaNode {
  if (node.allOf === undefined) return node;
  if (!Array.isArray(node.allOf)) throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/allOf`, "allOf must be a list");
  node.allOf.forEach((entry, i) => {
    const rest = isNode(entry) ? Object.keys(entry).filter((k) => !["if", "then", "else", "$comment", "description"].includes(k)) : ["?"];
    if (rest.length > 0) {
      throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/allOf/${i}`, `allOf entries other than if/then/else are not supported (found ${rest.join(", ")})`);
    }
  });
  const { allOf: _a, ...rest } = node;
  return rest;
}

function typeAndNullable(node: SchemaNode, path: string): { type: string | undefined; nullable: boolean } {
  if (Array.isArray(node.type)) {
    const types = node.type.filter((t) => t !== "null");
    if (types.length !== 1 || node.type.length > 2) {
      throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/type`, `a type list other than [T, "null"]: ${JSON.stringify(node.type)}`);
    }
    return { type: String(types[0]), nullable: node.type.length === 2 };
  }
  return { type: typeOf(node), nullable: node.nullable === true };
}

/** `not: {required: [...]}` kept as value validation; undefined for any other `not`. */
function requiredOnlyNot(node: SchemaNode): { required: string[]; notes: SchemaNode } | undefined {
  const not = node.not;
  if (!isNode(not) || !Array.isArray(not.required) || !not.required.every((r) => typeof r === "string")) return undefined;
  if (Object.keys(not).some((k) => k !== "required" && k !== "properties")) return undefined;
  return { required: not.required as string[], notes: isNode(not.properties) ? not.properties : {} };
}

function convertObject(node: SchemaNode, out: StructuralSchema, path: string): void {
  const props = node.properties;
  if (props !== undefined && !isNode(props)) throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/properties`, "properties must be an object");
  const properties: Record<string, StructuralSchema> = {};
  for (const [name, sub] of Object.entries(props ?? {})) {
    if (!isNode(sub)) throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/properties/${name}`, "a property schema must be an object");
    properties[name] = convert(sub, `${path}/properties/${name}`, true);
  }
  const forbidden = requiredOnlyNot(node);
  if (forbidden) {
    for (const name of forbidden.required) {
      if (properties[name]) continue;
      const note = forbidden.notes[name];
      const description = isNode(note) && typeof note.description === "string" ? note.description : undefined;
      if (!description) throw new CrdError("MISSING_DESCRIPTION", `${path}/not/properties/${name}`, "a forbidden member needs a description");
      properties[name] = { description, "x-kubernetes-preserve-unknown-fields": true };
    }
  }
  const hasProps = Object.keys(properties).length > 0;
  if (hasProps) out.properties = properties;
  const required = Array.isArray(node.required) ? node.required.filter((r): r is string => typeof r === "string") : [];
  if (required.length > 0) out.required = required;
  if (forbidden) out.not = { required: forbidden.required };
  const extra = node.additionalProperties;
  if (extra === true || (!hasProps && extra === undefined)) {
    out["x-kubernetes-preserve-unknown-fields"] = true;
  } else if (isNode(extra)) {
    if (hasProps) throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/additionalProperties`, "additionalProperties with a schema beside properties");
    out.additionalProperties = convert(extra, `${path}/additionalProperties`, false);
  } else if (extra !== undefined && extra !== false) {
    throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/additionalProperties`, "additionalProperties must be a boolean or a schema");
  }
}

function convertArray(node: SchemaNode, out: StructuralSchema, path: string): void {
  if (!isNode(node.items)) throw new CrdError("MISSING_TYPE", `${path}/items`, "an array needs an items schema");
  const items = convert(node.items, `${path}/items`, false);
  out.items = items;
  if (node.uniqueItems === true && items.type !== undefined && SCALARS.has(items.type)) out["x-kubernetes-list-type"] = "set";
}

function convert(raw: SchemaNode, path: string, isProperty: boolean): StructuralSchema {
  for (const key of Object.keys(raw)) {
    if (!KNOWN.has(key)) throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/${key}`, `keyword ${key} has no structural form`);
  }
  for (const key of ["oneOf", "anyOf"] as const) {
    const list = raw[key];
    if (!Array.isArray(list)) continue;
    list.forEach((variant, i) => {
      for (const k of isNode(variant) ? Object.keys(variant) : []) {
        if (!KNOWN.has(k)) throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/${key}/${i}/${k}`, `keyword ${k} has no structural form`);
      }
    });
  }
  const node = flattenVariants(withoutConditionals(raw, path), path);
  const { type, nullable } = typeAndNullable(node, path);
  if (type === undefined) throw new CrdError("MISSING_TYPE", path, "no type, and none can be inferred");
  if (!TYPES.has(type)) throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/type`, `type ${type} is not supported`);
  const description = typeof node.description === "string" ? node.description.trim() : "";
  if (isProperty && description === "") throw new CrdError("MISSING_DESCRIPTION", path, "every field needs a description");

  const out: StructuralSchema = { type: type as StructuralSchema["type"] };
  if (description !== "") out.description = description;
  if (nullable) out.nullable = true;
  const values = "const" in node ? [node.const] : node.enum;
  if (Array.isArray(values)) out.enum = structuredClone(values) as Json[];
  if (node.default !== undefined) out.default = structuredClone(node.default) as Json;
  for (const key of COPIED) {
    if (node[key] !== undefined) (out as Record<string, unknown>)[key] = node[key];
  }
  if (typeof out.format === "string" && !FORMATS.has(out.format)) {
    throw new CrdError("UNSUPPORTED_FORMAT", `${path}/format`, `format ${out.format} is unknown to Kubernetes`);
  }
  for (const [key, bound] of [
    ["exclusiveMinimum", "minimum"],
    ["exclusiveMaximum", "maximum"],
  ] as const) {
    const v = node[key];
    if (typeof v === "number") {
      out[bound] = v;
      out[key] = true;
    } else if (v === true) {
      out[key] = true;
    }
  }
  if (type === "object") convertObject(node, out, path);
  if (type === "array") convertArray(node, out, path);
  return out;
}

/**
 * The structural form of `schema` (see the module comment). Throws `CrdError` when a node has
 * no structural form, has no type, or a property has no description.
 */
export function toStructural(schema: SchemaNode): StructuralSchema {
  return convert(schema, "", false);
}
