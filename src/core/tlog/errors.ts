/**
 * The one error type of the transparency-log core. `PROOF_MALFORMED`: an input that is not
 * well-formed (a size or index that is not a safe non-negative integer or is out of range, a
 * hash of the wrong length, a proof with missing or surplus hashes, a record of the wrong
 * shape). `PROOF_INVALID`: well-formed input that does not verify (a root or signature that
 * does not match). Callers branch on `code`, never on the message.
 */

/** Stable codes of {@link ProofError}. */
export type ProofErrorCode = "PROOF_INVALID" | "PROOF_MALFORMED";

/** A proof, tree, tree head or checkpoint input that is malformed or does not verify. */
export class ProofError extends Error {
  override readonly name = "ProofError";
  constructor(
    readonly code: ProofErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Shorthand for `new ProofError("PROOF_MALFORMED", message)`. */
export function malformed(message: string): ProofError {
  return new ProofError("PROOF_MALFORMED", message);
}

/** Shorthand for `new ProofError("PROOF_INVALID", message)`. */
export function invalid(message: string): ProofError {
  return new ProofError("PROOF_INVALID", message);
}
