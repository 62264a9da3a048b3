/** The typed error of CRD generation: a schema the generator cannot turn into a structural schema. */

/** Stable codes of CRD generation errors. */
export type CrdErrorCode =
  /** A JSON Schema keyword Kubernetes cannot express and the generator has no rule for. */
  | "UNSUPPORTED_KEYWORD"
  /** A property without a description (`kubectl explain` would show nothing). */
  | "MISSING_DESCRIPTION"
  /** A node whose type cannot be determined (structural schemas need one everywhere). */
  | "MISSING_TYPE"
  /** Variants of a oneOf/anyOf that disagree on a property's type. */
  | "MERGE_CONFLICT"
  /** A format Kubernetes does not know. */
  | "UNSUPPORTED_FORMAT";

/** Generation failed at `path` (a JSON pointer into the source schema). */
export class CrdError extends Error {
  override readonly name = "CrdError";

  constructor(
    /** Stable code: branch on this, never on the message. */
    readonly code: CrdErrorCode,
    /** JSON pointer of the offending node in the source schema (`/` for the root). */
    readonly path: string,
    message: string,
  ) {
    super(`${path || "/"}: ${message}`);
  }
}
