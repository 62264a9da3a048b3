/**
 * Turns Ajv's error objects into plain-words lines: `<JSON pointer>: <rule broken>`, with `/`
 * for the whole value, and ` (<reason>)` appended when the failing subschema carries a
 * `$comment` (used to explain conditional rules). Identical lines are reported once; the
 * bookkeeping error an `if` adds on top of its `then`/`else` errors is dropped.
 */
import type { ErrorObject } from "ajv/dist/2020.js";
import { resolveSchemaUri } from "./registry.js";

type Schemaish = Record<string, unknown>;

const isObject = (v: unknown): v is Schemaish => typeof v === "object" && v !== null && !Array.isArray(v);

const show = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

const escapePointer = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1");

function article(type: string): string {
  const known: Record<string, string> = {
    string: "a string",
    number: "a number",
    integer: "an integer",
    boolean: "a boolean",
    object: "an object",
    array: "an array",
    null: "null",
  };
  return known[type] ?? type;
}

/** The values a discriminator's oneOf branches accept for its tag property. */
function tagValues(parentSchema: unknown, tag: string): string[] {
  if (!isObject(parentSchema) || !Array.isArray(parentSchema.oneOf)) return [];
  const values: string[] = [];
  for (const branch of parentSchema.oneOf as unknown[]) {
    let sch: unknown = branch;
    if (isObject(sch) && typeof sch.$ref === "string") sch = resolveSchemaUri(sch.$ref);
    const props = isObject(sch) ? sch.properties : undefined;
    const prop = isObject(props) ? props[tag] : undefined;
    if (!isObject(prop)) continue;
    if (prop.const !== undefined) values.push(show(prop.const));
    else if (Array.isArray(prop.enum)) values.push(...prop.enum.map(show));
  }
  return values;
}

function plural(n: unknown, word: string): string {
  return `${show(n)} ${word}${n === 1 ? "" : "s"}`;
}

/** The rule an error broke, in plain words, and the path it applies to; undefined to drop it. */
function describe(e: ErrorObject): { path: string; rule: string } | undefined {
  const p = e.params as Record<string, unknown>;
  const path = e.instancePath;
  switch (e.keyword) {
    case "if":
      return undefined;
    case "required":
      return { path, rule: `must have required property '${show(p.missingProperty)}'` };
    case "additionalProperties":
      return { path, rule: `must not have additional property '${show(p.additionalProperty)}'` };
    case "type": {
      const types = Array.isArray(p.type) ? p.type : String(p.type).split(",");
      return { path, rule: `must be ${types.map((t) => article(String(t))).join(" or ")}` };
    }
    case "pattern":
      return { path, rule: `must match pattern ${show(p.pattern)}` };
    case "format":
      return { path, rule: `must be a valid ${show(p.format)}` };
    case "const":
      return { path, rule: `must equal ${JSON.stringify(p.allowedValue)}` };
    case "enum":
      return { path, rule: `must be one of: ${(p.allowedValues as unknown[]).map(show).join(", ")}` };
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return { path, rule: `must be ${show(p.comparison)} ${show(p.limit)}` };
    case "minItems":
      return { path, rule: `must have at least ${plural(p.limit, "item")}` };
    case "maxItems":
      return { path, rule: `must have at most ${plural(p.limit, "item")}` };
    case "minLength":
      return { path, rule: p.limit === 1 ? "must not be empty" : `must be at least ${plural(p.limit, "character")} long` };
    case "maxLength":
      return { path, rule: `must be at most ${plural(p.limit, "character")} long` };
    case "uniqueItems":
      return { path, rule: `must not have duplicate items (items ${show(p.j)} and ${show(p.i)} are identical)` };
    case "not": {
      const forbidden = isObject(e.schema) && Array.isArray(e.schema.required) ? e.schema.required : undefined;
      return forbidden?.length === 1 ? { path, rule: `must not have property '${show(forbidden[0])}'` } : { path, rule: "must not match the forbidden schema" };
    }
    case "oneOf":
      return { path, rule: "must match exactly one of the allowed shapes" };
    case "anyOf":
      return { path, rule: "must match at least one of the allowed shapes" };
    case "discriminator": {
      const tag = String(p.tag);
      // A missing tag is already reported by `required`.
      if (p.tagValue === undefined) return undefined;
      const values = tagValues(e.parentSchema, tag);
      const rule = values.length > 0 ? `must be one of: ${values.join(", ")}` : "must name a known variant";
      return { path: `${path}/${escapePointer(tag)}`, rule };
    }
    case "false schema":
      return { path, rule: "is not allowed" };
    default:
      return { path, rule: e.message ?? `must satisfy ${e.keyword}` };
  }
}

/**
 * Plain-words lines for Ajv errors (collected with `verbose: true`, so each error carries its
 * schema and parent schema), for example
 * `/mandates/0: must have required property 'signature' (required when status is accepted, active or expired)`.
 */
export function describeErrors(errors: readonly ErrorObject[]): string[] {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const e of errors) {
    const d = describe(e);
    if (d === undefined) continue;
    const key = `${d.path === "" ? "/" : d.path}: ${d.rule}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const reason = isObject(e.parentSchema) ? e.parentSchema.$comment : undefined;
    lines.push(typeof reason === "string" ? `${key} (${reason})` : key);
  }
  return lines;
}
