/**
 * One spelling per key and per signature. Pure.
 *
 * A signature or a key that has several encodings which all verify lets a party that does not
 * hold the private key change the bytes of a signed token (and every hash that covers them)
 * while it still verifies: one mandate then becomes several. So:
 * - base64url is canonical: no padding, no spare bits set in the last character (it re-encodes
 *   to itself); `isCanonicalBase64url`.
 * - an ES256 signature is 64 bytes `r || s` with `1 <= r, s < n`; an EdDSA signature is 64
 *   bytes `R || S` with `S < L` (RFC 8032 §5.1.7); `signatureEncodingProblem`. Both S halves
 *   of ES256 verify: the high-S twin `n - s` of a valid signature is valid too, and about
 *   every other signature of a standard signer (WebCrypto, node's crypto) is high S, so both
 *   are accepted. What makes the pair ONE signature is that every identity or hash derived
 *   from a signature is taken over its low-S form (`lowS`, `lowSSignatureText`), or over the
 *   signed content alone. Writ's own ES256 signatures are given in low S.
 * - an Ed25519 public key is a canonical encoding (`y < p`) that is not one of the 8
 *   small-order points of edwards25519 (the identity, the point of order 2, two of order 4,
 *   four of order 8), in any of its 14 encodings: with such a key, a fixed signature
 *   (`R` a small-order point, `S = 0`) verifies every payload. A P-256 key's coordinates are
 *   below the field prime (on the curve is checked when node imports it); `keyEncodingProblem`.
 */
/** Signature algorithms Writ accepts. */
export type JwsAlg = "EdDSA" | "ES256";

const B64URL_RE = /^[A-Za-z0-9_-]*$/;

/**
 * True for base64url text that re-encodes to itself: the alphabet only, no padding, no spare
 * bits set in the last character.
 */
export function isCanonicalBase64url(text: string): boolean {
  return B64URL_RE.test(text) && Buffer.from(text, "base64url").toString("base64url") === text;
}

/** The order n of the P-256 group. */
export const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
/** The field prime of P-256. */
const P256_PRIME = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
/** The order L of the edwards25519 prime-order subgroup. */
export const ED25519_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;
/** The field prime p = 2^255 - 19 of edwards25519. */
export const ED25519_PRIME = 2n ** 255n - 19n;

const bigBE = (b: Uint8Array): bigint => BigInt(`0x${Buffer.from(b).toString("hex") || "0"}`);
const bigLE = (b: Uint8Array): bigint => bigBE(Buffer.from(b).reverse());

/**
 * The y coordinates (sign bit cleared, little-endian) of the small-order points of
 * edwards25519, in every encoding below 2^255: 0 (order 4), 1 (the identity), the two of the
 * order-8 points, p - 1 (order 2), and the non-canonical p (= 0) and p + 1 (= 1). With either
 * sign bit these are the 14 encodings of the 8 small-order points (test/unit/core/jose derives
 * the 8 points from the curve and checks the list).
 */
export const ED25519_SMALL_ORDER_Y: readonly bigint[] = [
  0n,
  1n,
  bigLE(Buffer.from("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", "hex")),
  bigLE(Buffer.from("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", "hex")),
  ED25519_PRIME - 1n,
  ED25519_PRIME,
  ED25519_PRIME + 1n,
];

/**
 * Why the raw key material of `kty`/`crv` cannot be a Writ public key, or undefined. `x` (and
 * for P-256 `y`) are the decoded 32-byte coordinates.
 */
export function keyEncodingProblem(kty: "OKP" | "EC", x: Uint8Array, y?: Uint8Array): string | undefined {
  if (kty === "OKP") {
    const raw = Buffer.from(x);
    raw[31] = (raw[31] ?? 0) & 0x7f; // the sign of x: either one, the list covers both
    const yy = bigLE(raw);
    if (ED25519_SMALL_ORDER_Y.includes(yy)) {
      return "public key is a small-order point of edwards25519 (the identity or a torsion point): a fixed signature would verify every payload";
    }
    if (yy >= ED25519_PRIME) return "public key is not a canonical Ed25519 point encoding (y is not below p)";
    return undefined;
  }
  for (const [name, c] of [
    ["x", x],
    ["y", y],
  ] as const) {
    if (c === undefined || bigBE(c) >= P256_PRIME) return `public key member ${name} is not a canonical P-256 coordinate (not below p)`;
  }
  return undefined;
}

/**
 * Why `sig` (decoded) is not an accepted encoding of an `alg` signature, or undefined (an
 * ES256 high S is accepted). Says nothing about whether it verifies.
 */
export function signatureEncodingProblem(alg: JwsAlg, sig: Uint8Array): string | undefined {
  if (sig.length !== 64) return `${alg} signature must be 64 bytes, not ${sig.length}`;
  if (alg === "ES256") {
    const r = bigBE(sig.subarray(0, 32));
    const s = bigBE(sig.subarray(32));
    if (r === 0n || r >= P256_ORDER || s === 0n || s >= P256_ORDER) return "ES256 signature r or s is not between 1 and n - 1";
    return undefined;
  }
  if (bigLE(sig.subarray(32)) >= ED25519_ORDER) return "EdDSA signature S is not below the group order L (RFC 8032)";
  return undefined;
}

/** `sig` (an `alg` signature) in its low-S form: ES256 `s > n/2` becomes `n - s`; otherwise unchanged. */
export function lowS(alg: JwsAlg, sig: Uint8Array): Buffer {
  const out = Buffer.from(sig);
  if (alg !== "ES256" || sig.length !== 64) return out;
  const s = bigBE(sig.subarray(32));
  if (s <= P256_ORDER >> 1n) return out;
  Buffer.from((P256_ORDER - s).toString(16).padStart(64, "0"), "hex").copy(out, 32);
  return out;
}

/**
 * The base64url signature `signature` of `alg` in its low-S form (ES256 `s > n/2` becomes
 * `n - s`), the spelling every hash over a signature is taken on; any other text unchanged.
 */
export function lowSSignatureText(alg: unknown, signature: string): string {
  if (alg !== "ES256" || !isCanonicalBase64url(signature)) return signature;
  const raw = Buffer.from(signature, "base64url");
  return raw.length === 64 ? lowS("ES256", raw).toString("base64url") : signature;
}
