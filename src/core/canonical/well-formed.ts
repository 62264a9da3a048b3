/**
 * I-JSON (RFC 7493) text: every string of a JSON value, member names included, is well-formed
 * Unicode, i.e. holds no lone surrogate (a UTF-16 code unit U+D800–U+DFFF that is not part of
 * a high-low pair). `JSON.parse` accepts `"\ud800"`; such text has no UTF-8 form, so RFC 8785
 * cannot canonicalize it (an independent verifier cannot reproduce its hash) and Postgres
 * refuses it in `jsonb` (22P02, "Unicode low surrogate must follow a high surrogate").
 *
 * Cost: one regular-expression test per string; only a string that holds a surrogate at all
 * (any non-BMP character does) is checked code unit by code unit.
 */

const SURROGATE = /[\uD800-\uDFFF]/;

/** True when `s` holds no lone surrogate (what `String.prototype.isWellFormed` answers). */
export function isWellFormedText(s: string): boolean {
  if (!SURROGATE.test(s)) return true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = s.charCodeAt(i + 1); // NaN past the end
    if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return false;
    i++;
  }
  return true;
}

/**
 * Where the first lone surrogate of a parsed JSON value is, in document order: `path` names
 * the members (and array indexes) leading to the string that holds it, or to the object one
 * of whose member names holds it (`inName`). The path never includes a name with a lone
 * surrogate, so it can be shown.
 */
export interface LoneSurrogate {
  path: string[];
  inName: boolean;
}

interface Pending {
  value: unknown;
  key: string;
  parent: Pending | null;
}

function pathOf(p: Pending | null): string[] {
  const path: string[] = [];
  for (let at = p; at?.parent; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * The first lone surrogate of `value` (a value `JSON.parse` returned), or undefined when the
 * value is I-JSON text throughout. Iterative, so any nesting depth JSON.parse accepts is fine.
 */
export function findLoneSurrogate(value: unknown): LoneSurrogate | undefined {
  const stack: Pending[] = [{ value, key: "", parent: null }];
  while (stack.length > 0) {
    const at = stack.pop() as Pending;
    const v = at.value;
    if (typeof v === "string") {
      if (!isWellFormedText(v)) return { path: pathOf(at), inName: false };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: String(i), parent: at });
    } else if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v);
      if (!keys.every(isWellFormedText)) return { path: pathOf(at), inName: true };
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] as string;
        stack.push({ value: (v as Record<string, unknown>)[k], key: k, parent: at });
      }
    }
  }
  return undefined;
}

/**
 * The sentence for `found`: `<field> must not contain a lone surrogate`, the field being its
 * path joined with "." (`action.action_id`), or `whole` when the path is empty, and `member
 * names of <field>` when the lone surrogate is in a member name.
 */
export function describeLoneSurrogate(found: LoneSurrogate, whole: string): string {
  const field = found.path.length > 0 ? found.path.join(".") : whole;
  return `${found.inName ? `member names of ${field}` : field} must not contain a lone surrogate`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * True when `v` holds U+0000: a string, or any string (member name or value) in a JSON value.
 * Postgres text cannot hold NUL, so no string Writ stores or looks up may contain it (request
 * schemas say so with `NO_NUL_PATTERN`, src/core/schemas/text.ts).
 */
export function hasNul(v: unknown): boolean {
  if (typeof v === "string") return v.includes("\u0000");
  if (Array.isArray(v)) return v.some(hasNul);
  if (isPlainObject(v)) return Object.entries(v).some(([k, x]) => k.includes("\u0000") || hasNul(x));
  return false;
}
