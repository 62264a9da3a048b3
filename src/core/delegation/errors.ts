/** Errors of the delegation area, with a stable code per failure. */

export type DelegationErrorCode =
  /** A renewal reuses the old delegation_id (a renewal must be a new grant). */
  | "RENEWAL_SAME_ID"
  /** A renewal's granted_at or expires_at is not an RFC 3339 date-time, or the window is empty. */
  | "RENEWAL_WINDOW_INVALID";

export class DelegationError extends Error {
  override readonly name = "DelegationError";
  constructor(
    readonly code: DelegationErrorCode,
    message: string,
  ) {
    super(message);
  }
}
