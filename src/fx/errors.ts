/** Why the rate source gave no usable answer (each becomes the 502 `FX source did not answer`). */

/** Stable codes of source failures. */
export type FxSourceErrorCode =
  /** SVC_FX_SOURCE_URL is unset or unusable. */
  | "NOT_CONFIGURED"
  /** No answer within SVC_FX_TIMEOUT_MS. */
  | "TIMEOUT"
  /** Connection refused, reset, DNS failure. */
  | "UNREACHABLE"
  /** The source's address is one the outbound policy refuses (WRIT_OUTBOUND_*). */
  | "REFUSED"
  /** A status other than 200, 404 or 422. */
  | "BAD_STATUS"
  /** A 200 whose body is not the protocol's answer for the question asked. */
  | "BAD_ANSWER";

/** The source did not answer usably; `code` says how. */
export class FxSourceError extends Error {
  override readonly name = "FxSourceError";
  constructor(
    readonly code: FxSourceErrorCode,
    message: string,
  ) {
    super(message);
  }
}
