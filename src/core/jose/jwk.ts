/**
 * Public JWKs: the only key types Writ accepts are Ed25519 (OKP, alg EdDSA) and P-256 (EC,
 * alg ES256). A key that carries private members (`d`, or any RSA/oct secret) is refused
 * wherever a public key is expected.
 *
 * Key id rule (also the agent fingerprint): `kid = "sha256:" + hex(SHA-256(JCS(required
 * members)))`, where the required members are those of RFC 7638 (`crv`, `kty`, `x` for OKP;
 * `crv`, `kty`, `x`, `y` for EC). JCS of those members is exactly RFC 7638's thumbprint input,
 * so the hex is the RFC 7638 SHA-256 thumbprint in hex instead of base64url.
 *
 * One key, one spelling (./canonical-forms.ts): coordinates are canonical base64url (a spare
 * bit set in the last character would give the same key another thumbprint), an Ed25519 key is
 * a canonical point encoding and never one of the small-order points (with those, a fixed
 * signature verifies every payload), P-256 coordinates are below p and on the curve. Every
 * import of a public key goes through `parsePublicJwk`, and every key a signature is checked
 * with through `publicKeyObject`, which both refuse such keys.
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { hashOf, type HashString } from "../canonical/index.js";
import { isCanonicalBase64url, keyEncodingProblem, type JwsAlg } from "./canonical-forms.js";
import { JoseError } from "./errors.js";

export type { JwsAlg };
export const ALLOWED_ALGS: readonly JwsAlg[] = ["EdDSA", "ES256"];

export interface Ed25519PublicJwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid?: string;
  alg?: string;
  use?: string;
}
export interface P256PublicJwk {
  kty: "EC";
  crv: "P-256";
  x: string;
  y: string;
  kid?: string;
  alg?: string;
  use?: string;
}
/** A validated public JWK. */
export type PublicJwk = Ed25519PublicJwk | P256PublicJwk;

/** Members of a JWK that hold private key material (EC/OKP `d`, RSA and oct secrets). */
export const PRIVATE_JWK_MEMBERS: readonly string[] = ["d", "p", "q", "dp", "dq", "qi", "k", "oth", "priv"];
const ALLOWED_MEMBERS = new Set(["kty", "crv", "x", "y", "kid", "alg", "use", "key_ops"]);

function coordinate(v: unknown, name: string): string {
  if (typeof v !== "string" || v.length === 0 || !isCanonicalBase64url(v) || Buffer.from(v, "base64url").length !== 32) {
    throw new JoseError("JWK_INVALID", `public key member ${name} must be 32 bytes of canonical base64url (no padding, no spare bits set)`);
  }
  return v;
}

/** Refuses key material with more than one spelling or a weak point (./canonical-forms.ts). */
function checkKeyMaterial(jwk: PublicJwk): void {
  const problem = keyEncodingProblem(jwk.kty, Buffer.from(jwk.x, "base64url"), jwk.kty === "EC" ? Buffer.from(jwk.y, "base64url") : undefined);
  if (problem !== undefined) throw new JoseError("JWK_INVALID", problem);
}

/**
 * Validates an untrusted value as a public JWK and returns a clean copy holding only the
 * public members. Throws JoseError (JWK_PRIVATE, JWK_UNSUPPORTED, JWK_INVALID).
 */
export function parsePublicJwk(input: unknown): PublicJwk {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new JoseError("JWK_INVALID", "public key must be a JWK object");
  }
  const jwk = input as Record<string, unknown>;
  for (const m of PRIVATE_JWK_MEMBERS) {
    if (m in jwk) throw new JoseError("JWK_PRIVATE", `public key must not contain the private member "${m}"`);
  }
  for (const m of Object.keys(jwk)) {
    if (!ALLOWED_MEMBERS.has(m)) throw new JoseError("JWK_INVALID", `public key has an unexpected member "${m}"`);
  }
  let out: PublicJwk;
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") {
    out = { kty: "OKP", crv: "Ed25519", x: coordinate(jwk.x, "x") };
  } else if (jwk.kty === "EC" && jwk.crv === "P-256") {
    out = { kty: "EC", crv: "P-256", x: coordinate(jwk.x, "x"), y: coordinate(jwk.y, "y") };
  } else {
    throw new JoseError("JWK_UNSUPPORTED", "public key must be an Ed25519 (OKP) or P-256 (EC) JWK");
  }
  if (jwk.alg !== undefined && jwk.alg !== algForJwk(out)) {
    throw new JoseError("JWK_INVALID", `public key alg ${String(jwk.alg)} does not fit its curve`);
  }
  checkKeyMaterial(out);
  // Reject points that are not on the curve (and other malformed keys) up front.
  try {
    createPublicKey({ key: { ...out }, format: "jwk" });
  } catch {
    throw new JoseError("JWK_INVALID", "public key is not a valid point on its curve");
  }
  return out;
}

/** The RFC 7638 required members of a public JWK. */
export function thumbprintInput(jwk: PublicJwk): Record<string, string> {
  return jwk.kty === "OKP" ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y };
}

/** Key id / agent fingerprint: `sha256:` + hex RFC 7638 thumbprint. */
export function keyId(jwk: PublicJwk): HashString {
  return hashOf(thumbprintInput(jwk));
}

/** The one JWS algorithm a key may be used with. */
export function algForJwk(jwk: PublicJwk): JwsAlg {
  return jwk.kty === "OKP" ? "EdDSA" : "ES256";
}

const keyObjects = new Map<string, KeyObject>();

/**
 * A node KeyObject for a validated public JWK (cached by key id). Throws JoseError JWK_INVALID
 * for a key `parsePublicJwk` refuses for its material (a small-order Ed25519 point, a
 * non-canonical encoding), whatever path the key came by.
 */
export function publicKeyObject(jwk: PublicJwk): KeyObject {
  const kid = keyId(jwk);
  let k = keyObjects.get(kid);
  if (!k) {
    if (typeof jwk.x !== "string" || !isCanonicalBase64url(jwk.x) || (jwk.kty === "EC" && (typeof jwk.y !== "string" || !isCanonicalBase64url(jwk.y)))) {
      throw new JoseError("JWK_INVALID", "public key members must be canonical base64url");
    }
    checkKeyMaterial(jwk);
    k = createPublicKey({ key: thumbprintInput(jwk), format: "jwk" });
    if (keyObjects.size > 10_000) keyObjects.clear();
    keyObjects.set(kid, k);
  }
  return k;
}
