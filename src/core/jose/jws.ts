/**
 * Flattened JWS (RFC 7515 §7.2.2) exactly as Writ uses it: an object with the three members
 * `protected`, `payload`, `signature` and nothing else (no unprotected `header`).
 *
 * Verification rules, in order: shape; protected header is JSON with `alg` in {EdDSA, ES256}
 * and matching the key's type; `typ` equals the expected value when one is named; no `crit`
 * (Writ understands no extensions); no key-carrying headers (`jwk`, `jku`, `x5c`, `x5u`): the
 * key always comes from the verifier, never from the token; `kid`, when present, equals the
 * key's id; then the signature (jose); then, when an expected payload is given, the payload
 * bytes equal it exactly.
 */
import { FlattenedSign, flattenedVerify } from "jose";
import { ALLOWED_ALGS, algForJwk, keyId, publicKeyObject, type JwsAlg, type PublicJwk } from "./jwk.js";
import { JoseError } from "./errors.js";
import type { Signer } from "./keys.js";

/** The JWS object of the spec: required strings protected, payload, signature; nothing else. */
export interface JwsObject {
  protected: string;
  payload: string;
  signature: string;
}

/** Protected header members Writ writes and reads. */
export interface JwsHeader {
  alg: JwsAlg;
  kid?: string;
  typ?: string;
  [k: string]: unknown;
}

const FORBIDDEN_HEADERS = ["jwk", "jku", "x5c", "x5u", "x5t", "x5t#S256"];
const B64URL_RE = /^[A-Za-z0-9_-]*$/;

/**
 * True for base64url text that re-encodes to itself: no padding, no spare bits set in the last
 * character. Without this, a signature string could change (and with it every hash covering
 * the record) while still verifying.
 */
export function isCanonicalBase64url(text: string): boolean {
  return B64URL_RE.test(text) && Buffer.from(text, "base64url").toString("base64url") === text;
}

/** Signs `payload` as a flattened JWS with `alg`, `kid` and (when given) `typ` protected. */
export async function signJws(payload: Uint8Array | string, signer: Signer, typ?: string): Promise<JwsObject> {
  const bytes = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;
  const header: JwsHeader = { alg: signer.alg, kid: signer.kid, ...(typ ? { typ } : {}) };
  const jws = await new FlattenedSign(bytes).setProtectedHeader(header).sign(signer.privateKey);
  return { protected: jws.protected ?? "", payload: jws.payload, signature: jws.signature };
}

/** Checks the shape of an untrusted value as a flattened JWS object. */
export function parseJwsObject(input: unknown): JwsObject {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new JoseError("JWS_MALFORMED", "signature must be a JWS object");
  }
  const o = input as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length !== 3 || !("protected" in o) || !("payload" in o) || !("signature" in o)) {
    throw new JoseError("JWS_MALFORMED", "JWS object must have exactly protected, payload and signature");
  }
  for (const k of ["protected", "payload", "signature"] as const) {
    if (typeof o[k] !== "string" || !isCanonicalBase64url(o[k] as string)) {
      throw new JoseError("JWS_MALFORMED", `JWS member ${k} must be canonical base64url`);
    }
  }
  return { protected: o.protected as string, payload: o.payload as string, signature: o.signature as string };
}

/** Decodes the protected header without verifying anything. */
export function decodeJwsHeader(jws: JwsObject): JwsHeader {
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(jws.protected, "base64url").toString("utf8"));
  } catch {
    throw new JoseError("JWS_MALFORMED", "JWS protected header is not JSON");
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) {
    throw new JoseError("JWS_MALFORMED", "JWS protected header is not an object");
  }
  return header as JwsHeader;
}

export interface VerifyOptions {
  /** Required `typ` of the protected header. */
  typ?: string;
  /** When given, the payload must be exactly these bytes. */
  payload?: Uint8Array | string;
}

export interface Verified {
  header: JwsHeader;
  payload: Buffer;
}

/** Verifies a flattened JWS against one public key. Throws JoseError with a stable code. */
export async function verifyJws(input: unknown, key: PublicJwk, opts: VerifyOptions = {}): Promise<Verified> {
  const jws = parseJwsObject(input);
  const header = decodeJwsHeader(jws);
  if (typeof header.alg !== "string" || !ALLOWED_ALGS.includes(header.alg)) {
    throw new JoseError("JWS_ALG_NOT_ALLOWED", `JWS alg ${JSON.stringify(header.alg)} is not allowed (EdDSA or ES256 only)`);
  }
  if (header.alg !== algForJwk(key)) {
    throw new JoseError("JWS_ALG_NOT_ALLOWED", `JWS alg ${header.alg} does not fit the ${key.kty} key`);
  }
  if (opts.typ !== undefined && header.typ !== opts.typ) {
    throw new JoseError("JWS_TYP_MISMATCH", `JWS typ must be ${opts.typ}`);
  }
  if ("crit" in header) throw new JoseError("JWS_CRIT_UNSUPPORTED", "JWS crit extensions are not supported");
  for (const h of FORBIDDEN_HEADERS) {
    if (h in header) throw new JoseError("JWS_HEADER_NOT_ALLOWED", `JWS header ${h} is not allowed: keys come from the verifier`);
  }
  if (header.kid !== undefined && header.kid !== keyId(key)) {
    throw new JoseError("JWS_KID_MISMATCH", "JWS kid does not name the verifying key");
  }
  let payload: Buffer;
  try {
    const r = await flattenedVerify(jws, publicKeyObject(key), { algorithms: [header.alg] });
    payload = Buffer.from(r.payload);
  } catch {
    throw new JoseError("JWS_SIGNATURE_INVALID", "JWS signature does not verify");
  }
  if (opts.payload !== undefined) {
    const want = typeof opts.payload === "string" ? Buffer.from(opts.payload, "utf8") : Buffer.from(opts.payload);
    if (!want.equals(payload)) throw new JoseError("JWS_PAYLOAD_MISMATCH", "JWS payload does not match the signed record");
  }
  return { header, payload };
}
