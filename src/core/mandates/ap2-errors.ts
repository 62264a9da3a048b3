/** Errors of the AP2 mandate import, with a stable code per failure. */

export type Ap2ImportErrorCode =
  /** The import options are unusable (empty delegation id or principal, non-finite now). */
  | "OPTIONS_INVALID"
  /** The claims are not an object, or a required claim is missing or has the wrong type. */
  | "CLAIMS_INVALID"
  /** `vct` is not "mandate.payment.open.1". */
  | "VCT_UNSUPPORTED"
  /** The claims still carry SD-JWT digests (`_sd`, `_sd_alg`, `{"...": digest}`): disclose first. */
  | "SD_JWT_UNPROCESSED"
  /** A top-level claim that narrows the payment in a way Writ cannot enforce, or an unknown claim. */
  | "CLAIM_UNSUPPORTED"
  /** `cnf` is not `{jwk}` with a public Ed25519 or P-256 JWK. */
  | "CNF_INVALID"
  /** `cnf.jwk` is not the agent's key. */
  | "CNF_KEY_MISMATCH"
  /** `exp` (or `payment.execution_date.not_after`) is not in the future. */
  | "MANDATE_EXPIRED"
  /** A constraint is malformed. */
  | "CONSTRAINT_INVALID"
  /** A constraint type Writ does not map to a scope (never silently dropped). */
  | "CONSTRAINT_UNSUPPORTED"
  /** A mapped constraint with a member Writ cannot enforce (for example a minimum amount). */
  | "CONSTRAINT_UNENFORCEABLE"
  /** The same constraint type appears twice. */
  | "CONSTRAINT_DUPLICATE"
  /** Amount constraints name different currencies (a scope has one). */
  | "CURRENCY_MISMATCH"
  /** No amount bound at all (no amount_range, budget or payment_amount): a scope needs a currency and a bound. */
  | "NO_AMOUNT_BOUND"
  /** The constraints allow nothing (an empty payee set or an empty time window). */
  | "UNSATISFIABLE";

export class Ap2ImportError extends Error {
  override readonly name = "Ap2ImportError";
  constructor(
    readonly code: Ap2ImportErrorCode,
    message: string,
    /** The claim or constraint type concerned, when there is one. */
    readonly subject?: string,
  ) {
    super(message);
  }
}
