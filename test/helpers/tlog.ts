/** Test helpers for src/core/tlog. */
import { ProofError } from "../../src/core/tlog/index.js";

/** The code of the ProofError `fn` throws, or "none" when it returns (other errors are rethrown). */
export function proofErrorCode(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProofError) return e.code;
    throw e;
  }
  return "none";
}
