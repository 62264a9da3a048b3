/**
 * Typed `--set field=value` values. A field is settable only when the verb names its type:
 * amounts are plain decimals (`150`, `12.50`), lists are comma-separated (`a,b`; `[a, b]`
 * also reads; an empty value is the empty list), booleans are `true`/`false`, everything else
 * is a string. An unknown field is a usage error listing the settable ones, so a typo never
 * writes a field nobody reads.
 */
import { usageError } from "./errors.js";

/** The type of a settable field. */
export type FieldType = "amount" | "list" | "string" | "boolean";

const AMOUNT_RE = /^(0|[1-9][0-9]{0,14})(\.[0-9]{1,8})?$/;

/** Parses `value` as `type` for `--set field=value`. */
export function parseFieldValue(field: string, type: FieldType, value: string): string | number | boolean | string[] {
  switch (type) {
    case "amount":
      if (!AMOUNT_RE.test(value.trim())) throw usageError(`--set ${field} takes a plain decimal amount such as 150 or 12.50, not ${JSON.stringify(value)}`);
      return Number(value.trim());
    case "boolean":
      if (value !== "true" && value !== "false") throw usageError(`--set ${field} takes true or false, not ${JSON.stringify(value)}`);
      return value === "true";
    case "list": {
      const inner = value
        .trim()
        .replace(/^\[(.*)\]$/s, "$1")
        .trim();
      return inner === ""
        ? []
        : inner
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s !== "");
    }
    default:
      if (value === "") throw usageError(`--set ${field} needs a value`);
      return value;
  }
}

/** `pairs` as a map from dotted field path to typed value, checked against `fields`. */
export function typedSets(pairs: ReadonlyArray<[string, string]>, fields: Readonly<Record<string, FieldType>>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [field, value] of pairs) {
    const type = Object.hasOwn(fields, field) ? fields[field] : undefined;
    if (type === undefined) throw usageError(`--set cannot change ${JSON.stringify(field)}; settable: ${Object.keys(fields).join(", ")}`);
    out.set(field, parseFieldValue(field, type, value));
  }
  return out;
}

/** A deep copy of `target` with each dotted path of `sets` set (intermediate objects created). */
export function applySets<T extends object>(target: T, sets: ReadonlyMap<string, unknown>): T {
  const out = structuredClone(target) as Record<string, unknown>;
  for (const [path, value] of sets) {
    const parts = path.split(".");
    let node = out;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (typeof next !== "object" || next === null || Array.isArray(next)) node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
    node[parts[parts.length - 1] as string] = value;
  }
  return out as T;
}
