/** Errors of the key and signature layer, with a stable code per failure. */

export type JoseErrorCode =
  | "JWK_INVALID"
  | "JWK_PRIVATE"
  | "JWK_UNSUPPORTED"
  | "JWS_MALFORMED"
  | "JWS_ALG_NOT_ALLOWED"
  | "JWS_TYP_MISMATCH"
  | "JWS_CRIT_UNSUPPORTED"
  | "JWS_HEADER_NOT_ALLOWED"
  | "JWS_KID_MISMATCH"
  | "JWS_SIGNATURE_INVALID"
  | "JWS_SIGNATURE_NOT_CANONICAL"
  | "JWS_PAYLOAD_MISMATCH"
  | "JWS_PAYLOAD_NOT_CANONICAL"
  | "KEY_INVALID";

export class JoseError extends Error {
  override readonly name = "JoseError";
  constructor(
    readonly code: JoseErrorCode,
    message: string,
  ) {
    super(message);
  }
}
