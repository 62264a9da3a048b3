/**
 * The text rule of every input, in one place: Postgres text cannot hold U+0000 (NUL), so no
 * string Writ stores or looks up may contain it. Request schemas carry it as a pattern
 * (`NO_NUL_PATTERN`, in `textSchema` fragments; the edge's one formatter,
 * src/api/routes/shared/schema-errors.ts, answers it as "<field> must not contain U+0000"); values
 * checked by hand use `hasNul` (src/core/canonical/well-formed.ts, beside the other text rule of
 * stored JSON; re-exported here). Behind the edge, the core and the store trust the typed values.
 */

/** Pattern of free text: anything but U+0000. */
export const NO_NUL_PATTERN = "^[^\\u0000]*$";

/** Bounds of a text field. */
export interface TextBounds {
  minLength?: number;
  maxLength?: number;
}

/** A JSON Schema fragment for a text field: a string within `bounds`, without NUL. */
export function textSchema<const B extends TextBounds>(bounds: B): { readonly type: "string" } & B & { readonly pattern: typeof NO_NUL_PATTERN } {
  return { type: "string", ...bounds, pattern: NO_NUL_PATTERN };
}
