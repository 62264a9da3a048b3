/** The typed error of schema validation. */

/** Stable codes of schema errors. */
export type SchemaErrorCode = "SCHEMA_INVALID";

/**
 * A value did not match its schema. `errors` holds one plain-words line per broken rule, each
 * starting with the JSON pointer of the offending field (`/` for the whole value).
 */
export class SchemaError extends Error {
  /** Stable code: branch on this, never on the message. */
  readonly code: SchemaErrorCode = "SCHEMA_INVALID";
  /** One line per broken rule, for example `/ledger/2/currency: must match pattern ^[A-Z]{3}$`. */
  readonly errors: string[];

  constructor(what: string, errors: string[]) {
    super(`${what} is not valid: ${errors.join("; ")}`);
    this.name = "SchemaError";
    this.errors = errors;
  }
}
