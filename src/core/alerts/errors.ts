/** Errors of subscriber alerts (enqueueing, verifying), each with a stable code (never branch on the message). */

/** Stable codes of `WebhookError`. */
export type WebhookErrorCode =
  /** An alert or target given to `enqueueAlert` is not well-formed. */
  | "ALERT_INVALID"
  /** A received alert body is not an alert, or its signature does not verify. */
  | "ALERT_NOT_VERIFIED";

/** A webhook failure with a stable `code`. */
export class WebhookError extends Error {
  override readonly name = "WebhookError";
  constructor(
    readonly code: WebhookErrorCode,
    message: string,
  ) {
    super(message);
  }
}
