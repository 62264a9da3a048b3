/**
 * How a verb fails. Exit statuses are the CLI's contract: 0 success, 1 a check failed (a
 * signature, a proof, a refused narrowing, a DENY) or the work could not be completed (a server
 * that answers an error, an unreadable file), 2 bad usage (unknown or missing flags, a malformed
 * value). Every message says what to do next.
 */

/** Exit status of a successful run. */
export const EXIT_OK = 0;
/** Exit status of a failed check or of work that could not be completed. */
export const EXIT_FAILED = 1;
/** Exit status of bad usage. */
export const EXIT_USAGE = 2;

/** Stable codes of CLI failures. */
export type CliErrorCode = "USAGE" | "SECRET_IN_ARGUMENT" | "FILE_UNREADABLE" | "FILE_EXISTS" | "INPUT_INVALID" | "CHECK_FAILED" | "SERVER_ERROR" | "NETWORK";

const USAGE_CODES: ReadonlySet<CliErrorCode> = new Set<CliErrorCode>(["USAGE", "SECRET_IN_ARGUMENT"]);

/** A failure a verb reports as one message and an exit status (2 for usage, else 1). */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    readonly code: CliErrorCode,
    message: string,
  ) {
    super(message);
  }

  /** The exit status this failure ends the run with. */
  get exitStatus(): number {
    return USAGE_CODES.has(this.code) ? EXIT_USAGE : EXIT_FAILED;
  }
}

/** Bad usage (exit 2). */
export function usageError(message: string): CliError {
  return new CliError("USAGE", message);
}
