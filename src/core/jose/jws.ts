/**
 * Flattened JWS (RFC 7515 §7.2.2) exactly as Writ uses it: an object with the three members
 * `protected`, `payload`, `signature` and nothing else (no unprotected `header`). This module
 * signs, checks shapes and headers, and holds the cryptographic primitive; verification of a
 * signed record, with every rule, is `verifySignedRecord` (./signed-record.ts).
 */
import { FlattenedSign, flattenedVerify } from "jose";
import { ALLOWED_ALGS, algForJwk, publicKeyObject, type JwsAlg, type PublicJwk } from "./jwk.js";
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

/**
 * The protected-header rules that need no key: `alg` EdDSA or ES256 (so `none` and HS256 are
 * refused before any cryptography), `typ` equal to `typ`, no `crit` (Writ understands no
 * extensions), no key-carrying header (the key always comes from the verifier). Returns the
 * header; throws JoseError.
 */
export function checkJwsHeader(header: JwsHeader, typ: string): JwsHeader & { alg: JwsAlg } {
  if (typeof header.alg !== "string" || !ALLOWED_ALGS.includes(header.alg)) {
    throw new JoseError("JWS_ALG_NOT_ALLOWED", `JWS alg ${JSON.stringify(header.alg)} is not allowed (EdDSA or ES256 only)`);
  }
  if (header.typ !== typ) throw new JoseError("JWS_TYP_MISMATCH", `JWS typ must be ${typ}`);
  if ("crit" in header) throw new JoseError("JWS_CRIT_UNSUPPORTED", "JWS crit extensions are not supported");
  for (const h of FORBIDDEN_HEADERS) {
    if (h in header) throw new JoseError("JWS_HEADER_NOT_ALLOWED", `JWS header ${h} is not allowed: keys come from the verifier`);
  }
  if (header.kid !== undefined && typeof header.kid !== "string") throw new JoseError("JWS_MALFORMED", "JWS kid must be a string");
  return header;
}

/**
 * The cryptographic check alone: true when `jws` (already shape-checked) is signed with `alg`
 * by `key`. Callers use `verifySignedRecord` (./signed-record.ts), which applies every rule.
 */
export async function verifyJwsSignature(jws: JwsObject, key: PublicJwk, alg: JwsAlg): Promise<boolean> {
  if (alg !== algForJwk(key)) return false;
  try {
    await flattenedVerify(jws, publicKeyObject(key), { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}
