/**
 * Flattening of `oneOf` / `anyOf` into one object schema, the simplest structural form
 * Kubernetes accepts: the merged node has the union of every variant's properties, `required`
 * keeps what every variant requires, and a property's constraints are kept only where all
 * variants agree (enums are unioned). The merged schema therefore accepts every valid variant
 * and some mixtures no variant allows; the controller's full validation (ajv, the source schema)
 * rejects those.
 *
 * Descriptions are kept so `kubectl explain` still teaches the variants: the node's description
 * lists each variant's own description, and a property used by only some variants says which
 * (`Only when type is time_window or business_hours_only.`).
 */
import { CrdError } from "./errors.js";
import type { SchemaNode } from "./types.js";

const isNode = (v: unknown): v is SchemaNode => typeof v === "object" && v !== null && !Array.isArray(v);

/** Keywords whose values must agree across variants to be kept. */
const AGREEING = [
  "pattern",
  "format",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "uniqueItems",
  "default",
] as const;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The allowed values of a node (`const` or `enum`), or undefined when it has neither. */
function valuesOf(node: SchemaNode): unknown[] | undefined {
  if ("const" in node) return [node.const];
  return Array.isArray(node.enum) ? node.enum : undefined;
}

/** The node's type, inferred from `const`/`enum` when not given. */
export function typeOf(node: SchemaNode): string | undefined {
  if (typeof node.type === "string") return node.type;
  const values = valuesOf(node);
  if (!values || values.length === 0) return undefined;
  const kinds = new Set(values.map((v) => (Number.isInteger(v) ? "integer" : Array.isArray(v) ? "array" : v === null ? "null" : typeof v)));
  if (kinds.size === 2 && kinds.has("integer") && kinds.has("number")) return "number";
  return kinds.size === 1 ? [...kinds][0] : undefined;
}

function unionValues(nodes: readonly SchemaNode[]): unknown[] | undefined {
  const out: unknown[] = [];
  for (const n of nodes) {
    const values = valuesOf(n);
    if (values === undefined) return undefined;
    for (const v of values) if (!out.some((o) => same(o, v))) out.push(v);
  }
  return out;
}

/** A variant's label: its discriminator value, or its 1-based position. */
function labelOf(branch: SchemaNode, discriminator: string | undefined, index: number): string {
  const props = isNode(branch.properties) ? branch.properties : {};
  const d = discriminator !== undefined && isNode(props[discriminator]) ? valuesOf(props[discriminator]) : undefined;
  if (d && d.length === 1 && typeof d[0] === "string") return `${discriminator} ${d[0]}`;
  return `variant ${index + 1}`;
}

interface Labelled {
  label: string;
  node: SchemaNode;
}

/** Joins descriptions: one when they agree, else each prefixed by its variant's label. */
function joinDescriptions(items: readonly Labelled[]): string | undefined {
  const described = items.filter((i) => typeof i.node.description === "string" && i.node.description !== "");
  if (described.length === 0) return undefined;
  const texts = new Set(described.map((i) => i.node.description as string));
  if (texts.size === 1) return [...texts][0];
  return described.map((i) => `For ${i.label}: ${String(i.node.description)}`).join(" ");
}

/** The union of several schemas of the same value (one per variant). */
function unionOf(items: readonly Labelled[], path: string): SchemaNode {
  const first = items[0];
  if (!first) return {};
  if (items.length === 1) return first.node;
  const out: SchemaNode = {};
  const types = new Set(items.map((i) => typeOf(i.node)));
  if (types.size > 1) throw new CrdError("MERGE_CONFLICT", path, `variants disagree on the type: ${[...types].join(", ")}`);
  const type = [...types][0];
  if (type !== undefined) out.type = type;
  const description = joinDescriptions(items);
  if (description !== undefined) out.description = description;
  const values = unionValues(items.map((i) => i.node));
  if (values !== undefined) out.enum = values;
  for (const k of AGREEING) {
    const v = first.node[k];
    if (v !== undefined && items.every((i) => same(i.node[k], v))) out[k] = v;
  }
  if (items.every((i) => isNode(i.node.items))) {
    out.items = unionOf(
      items.map((i) => ({ label: i.label, node: i.node.items as SchemaNode })),
      `${path}/items`,
    );
  }
  if (items.some((i) => isNode(i.node.properties))) Object.assign(out, unionObject({}, items, undefined, path));
  return out;
}

/** Union of object variants' properties on top of `base` (whose own keywords win). */
function unionObject(base: SchemaNode, variants: readonly Labelled[], discriminator: string | undefined, path: string): SchemaNode {
  const baseProps = isNode(base.properties) ? base.properties : {};
  const names: string[] = Object.keys(baseProps);
  for (const v of variants) {
    if (isNode(v.node.properties)) for (const n of Object.keys(v.node.properties)) if (!names.includes(n)) names.push(n);
  }
  const properties: SchemaNode = {};
  for (const name of names) {
    const having = variants.flatMap((v) =>
      isNode(v.node.properties) && isNode(v.node.properties[name]) ? [{ label: v.label, node: v.node.properties[name] as SchemaNode }] : [],
    );
    const own = isNode(baseProps[name]) ? (baseProps[name] as SchemaNode) : undefined;
    let merged = having.length > 0 ? unionOf(having, `${path}/properties/${name}`) : {};
    if (own) merged = withOwn(own, merged, `${path}/properties/${name}`);
    if (discriminator !== undefined && having.length > 0 && having.length < variants.length) {
      const which = having.map((h) => h.label.slice(discriminator.length + 1)).join(" or ");
      const text = typeof merged.description === "string" ? `${merged.description} ` : "";
      merged = { ...merged, description: `${text}Only when ${discriminator} is ${which}.` };
    }
    properties[name] = merged;
  }
  const out: SchemaNode = { properties };
  const baseRequired = Array.isArray(base.required) ? (base.required as string[]) : [];
  const variantRequired = variants.map((v) => (Array.isArray(v.node.required) ? (v.node.required as string[]) : []));
  const common = names.filter((n) => variantRequired.length > 0 && variantRequired.every((r) => r.includes(n)));
  const required = names.filter((n) => baseRequired.includes(n) || common.includes(n));
  if (required.length > 0) out.required = required;
  if (base.additionalProperties === true || variants.some((v) => v.node.additionalProperties === true)) {
    out.additionalProperties = true;
  }
  return out;
}

/** `own` (the node's own property schema) constrained further by the variants' union. */
function withOwn(own: SchemaNode, union: SchemaNode, path: string): SchemaNode {
  const ownType = typeOf(own);
  const unionType = typeOf(union);
  if (ownType !== undefined && unionType !== undefined && ownType !== unionType) {
    throw new CrdError("MERGE_CONFLICT", path, `the node says ${ownType}, its variants ${unionType}`);
  }
  const out: SchemaNode = { ...union, ...own };
  const ownValues = valuesOf(own);
  const unionValuesList = valuesOf(union);
  delete out.const;
  if (ownValues && unionValuesList) out.enum = ownValues.filter((v) => unionValuesList.some((u) => same(u, v)));
  else if (ownValues ?? unionValuesList) out.enum = ownValues ?? unionValuesList;
  const type = ownType ?? unionType;
  if (type !== undefined) out.type = type;
  return out;
}

/**
 * `node` without its `oneOf`/`anyOf`/`discriminator`: one object schema as described in the
 * module comment. A node without variants is returned unchanged.
 */
export function flattenVariants(node: SchemaNode, path: string): SchemaNode {
  const key = Array.isArray(node.oneOf) ? "oneOf" : Array.isArray(node.anyOf) ? "anyOf" : undefined;
  if (key === undefined) return node;
  if (Array.isArray(node.oneOf) && Array.isArray(node.anyOf)) {
    throw new CrdError("UNSUPPORTED_KEYWORD", path, "oneOf and anyOf on the same node");
  }
  const disc = isNode(node.discriminator) && typeof node.discriminator.propertyName === "string" ? node.discriminator.propertyName : undefined;
  const branches = (node[key] as unknown[]).map((b, i) => {
    if (!isNode(b)) throw new CrdError("UNSUPPORTED_KEYWORD", `${path}/${key}/${i}`, "a variant that is not a schema object");
    return flattenVariants(b, `${path}/${key}/${i}`);
  });
  const variants = branches.map((b, i) => ({ label: labelOf(b, disc, i), node: b }));
  const { oneOf: _o, anyOf: _a, discriminator: _d, ...base } = node;
  const types = new Set([typeOf(base), ...branches.map(typeOf)].filter((t) => t !== undefined));
  if (types.size > 1) throw new CrdError("MERGE_CONFLICT", path, `variants disagree on the type: ${[...types].join(", ")}`);
  const out: SchemaNode = { ...base };
  const type = [...types][0];
  if (type !== undefined) out.type = type;
  const listed = variants.filter((v) => typeof v.node.description === "string" && v.node.description !== "");
  if (listed.length > 0) {
    const head = typeof base.description === "string" ? `${base.description} ` : "";
    out.description = `${head}${listed.map((v) => `For ${v.label}: ${String(v.node.description)}`).join(" ")}`;
  }
  if (type === "object") Object.assign(out, unionObject(base, variants, disc, path));
  return out;
}
