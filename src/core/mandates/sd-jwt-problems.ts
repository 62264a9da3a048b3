/** Why a presented mandate SD-JWT is refused: one stable code per failure, with its message. */

export type MandateProblemCode =
  /** Not `<issuer-jwt>~<disclosure>~...~<kb-jwt>`, too large, or a part does not decode. */
  | "SD_JWT_MALFORMED"
  /** The issuer JWT's `alg` is not EdDSA or ES256 (or does not fit the key), or its header carries a key, `crit`, or no `kid`. */
  | "ISSUER_HEADER_INVALID"
  /** The issuer JWT's `typ` is not `dc+sd-jwt` (or `vc+sd-jwt`). */
  | "ISSUER_TYP_INVALID"
  /** No trusted issuer key has the header's `kid`. */
  | "ISSUER_UNKNOWN"
  /** The issuer's signature does not verify with the trusted key. */
  | "ISSUER_SIGNATURE_INVALID"
  /** `_sd_alg` is not sha-256 (or not at the top level), a disclosure is malformed, presented twice, of the wrong kind, or names a reserved or existing claim, or a digest occurs twice. */
  | "DISCLOSURE_INVALID"
  /** A disclosure matches no digest of the signed payload or of a disclosed value: altered, from another token, or nested in a disclosure not presented. */
  | "DISCLOSURE_UNREFERENCED"
  /** A constraint is withheld: an array element `{"...": digest}` has no disclosure, or an `_sd` digest without one sits in an object where constraints live (./withheld-constraints.ts; elsewhere it is a decoy, accepted). */
  | "DISCLOSURE_MISSING"
  /** No key-binding JWT after the last `~`. */
  | "KB_JWT_MISSING"
  /** The key-binding JWT's header (typ `kb+jwt`, alg EdDSA/ES256 fitting the `cnf` key) or claims (iat, aud, nonce, sd_hash) are unusable. */
  | "KB_JWT_INVALID"
  /** `cnf` is not `{jwk}` with a public Ed25519 or P-256 key, so nothing can check the key binding. */
  | "CNF_INVALID"
  /** The key-binding JWT is not signed by the key in `cnf`. */
  | "KB_JWT_SIGNATURE_INVALID"
  /** The key-binding JWT's `aud` is not the expected audience. */
  | "KB_JWT_AUDIENCE_MISMATCH"
  /** The key-binding JWT's `nonce` is not the expected nonce. */
  | "KB_JWT_NONCE_MISMATCH"
  /** The key-binding JWT's `iat` is older than the freshness window, or in the future. */
  | "KB_JWT_STALE"
  /** The key-binding JWT's `sd_hash` is not the hash of the presented SD-JWT. */
  | "KB_JWT_SD_HASH_MISMATCH";

/** One reason a mandate is refused. `code` is stable; `message` explains it. */
export interface MandateProblem {
  code: MandateProblemCode;
  message: string;
}
