/** Errors of the registry core, with a stable code per failure. */

/** Why a registry input was refused. */
export type RegistryErrorCode =
  /** A scope name that is not one of SCOPES. */
  | "SCOPE_UNKNOWN"
  /** A scope the organization type may not hold. */
  | "SCOPE_NOT_ALLOWED"
  /** An explicit scope list that is empty. */
  | "SCOPES_EMPTY"
  /** A subscription webhook URL that is not https (or http on localhost), or is malformed. */
  | "WEBHOOK_URL_INVALID";

/** A refused registry input; `message` is safe to show to the caller. */
export class RegistryError extends Error {
  override readonly name = "RegistryError";
  constructor(
    readonly code: RegistryErrorCode,
    message: string,
  ) {
    super(message);
  }
}
