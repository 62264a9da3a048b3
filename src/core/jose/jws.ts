/**
 * Flattened JWS (RFC 7515 §7.2.2) exactly as Writ uses it: an object with the three members
 * `protected`, `payload`, `signature` and nothing else (no unprotected `header`). This module
 * signs, checks shapes and headers, and holds the cryptographic primitive; verification of a
 * signed record, with every rule, is `verifySignedRecord` (./signed-record.ts).
 */
import { sign, verify } from "node:crypto";
import { FlattenedSign } from "jose";
import { isCanonicalBase64url, lowS, lowSSignatureText, signatureEncodingProblem } from "./canonical-forms.js";
import { ALLOWED_ALGS, algForJwk, publicKeyObject, type JwsAlg, type PublicJwk } from "./jwk.js";
import { JoseError } from "./errors.js";
import type { Signer } from "./keys.js";

export { isCanonicalBase64url } from "./canonical-forms.js";

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

/**
 * Signs `payload` as a flattened JWS with `alg`, `kid` and (when given) `typ` protected. An
 * ES256 signature is given in its low-S form, the only one Writ accepts.
 */
export async function signJws(payload: Uint8Array | string, signer: Signer, typ?: string): Promise<JwsObject> {
  const bytes = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;
  const header: JwsHeader = { alg: signer.alg, kid: signer.kid, ...(typ ? { typ } : {}) };
  const jws = await new FlattenedSign(bytes).setProtectedHeader(header).sign(signer.privateKey);
  const signature = lowS(signer.alg, Buffer.from(jws.signature, "base64url")).toString("base64url");
  return { protected: jws.protected ?? "", payload: jws.payload, signature };
}

/**
 * The base64url signature of a JWS signing input (`<protected>.<payload>` of a compact JWS, e.g.
 * an SD-JWT's issuer or key-binding JWT), in JOSE encoding and, for ES256, low S.
 */
export function signJwsInput(signingInput: string, signer: Signer): string {
  const data = Buffer.from(signingInput, "ascii");
  const raw = signer.alg === "EdDSA" ? sign(null, data, signer.privateKey) : sign("sha256", data, { key: signer.privateKey, dsaEncoding: "ieee-p1363" });
  return lowS(signer.alg, raw).toString("base64url");
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
 * Why the base64url `signature` is not an accepted spelling of an `alg` signature
 * (non-canonical base64url, a wrong length, ES256 r or s out of range, EdDSA S >= L), or
 * undefined. An ES256 high S is accepted: hashes are taken over `lowSJws`.
 */
export function jwsSignatureProblem(alg: JwsAlg, signature: string): string | undefined {
  if (!isCanonicalBase64url(signature)) return "the signature is not canonical base64url (padding, or spare bits set in its last character)";
  return signatureEncodingProblem(alg, Buffer.from(signature, "base64url"));
}

/**
 * THE signature primitive: every signature Writ checks (signed records, SD-JWT issuer and
 * key-binding JWTs, signed notes) is checked here. True when `signature` (raw bytes) over
 * `data` verifies with `key` under `alg`, the key fits `alg`, the key is not a weak or
 * non-canonical one and the signature is in its one accepted encoding (./canonical-forms.ts).
 * Never throws.
 */
export function verifySignatureBytes(key: PublicJwk, alg: JwsAlg, data: Uint8Array, signature: Uint8Array): boolean {
  if (alg !== algForJwk(key) || signatureEncodingProblem(alg, signature) !== undefined) return false;
  try {
    const k = publicKeyObject(key);
    return alg === "EdDSA" ? verify(null, data, k, signature) : verify("sha256", data, { key: k, dsaEncoding: "ieee-p1363" }, signature);
  } catch {
    return false;
  }
}

/**
 * True when the compact-JWS signing input `<protected>.<payload>` and base64url `signature`
 * verify with `key` under `alg`: each segment canonical base64url, then `verifySignatureBytes`.
 */
export function verifyJwsInput(key: PublicJwk, alg: JwsAlg, signingInput: string, signature: string): boolean {
  const parts = signingInput.split(".");
  if (parts.length !== 2 || !parts.every((p) => p.length > 0 && isCanonicalBase64url(p)) || !isCanonicalBase64url(signature)) return false;
  return verifySignatureBytes(key, alg, Buffer.from(signingInput, "ascii"), Buffer.from(signature, "base64url"));
}

/**
 * The cryptographic check alone: true when `jws` (already shape-checked) is signed with `alg`
 * by `key`. Callers use `verifySignedRecord` (./signed-record.ts), which applies every rule.
 */
export async function verifyJwsSignature(jws: JwsObject, key: PublicJwk, alg: JwsAlg): Promise<boolean> {
  if (!isCanonicalBase64url(jws.protected) || !isCanonicalBase64url(jws.payload) || !isCanonicalBase64url(jws.signature)) return false;
  return Promise.resolve(verifySignatureBytes(key, alg, Buffer.from(`${jws.protected}.${jws.payload}`, "ascii"), Buffer.from(jws.signature, "base64url")));
}

/**
 * `jws` with its signature in the low-S form when its protected header names ES256 (the
 * spelling every hash and identity over a signed record is taken on: the high-S twin of a
 * signature is the same signature); otherwise `jws` itself. Never throws.
 */
export function lowSJws<T extends JwsObject>(jws: T): T {
  let alg: unknown;
  try {
    alg = (JSON.parse(Buffer.from(jws.protected, "base64url").toString("utf8")) as { alg?: unknown }).alg;
  } catch {
    return jws;
  }
  const signature = lowSSignatureText(alg, jws.signature);
  return signature === jws.signature ? jws : { ...jws, signature };
}

/**
 * A signed record (an object with a JWS `signature` member) with that signature in its low-S
 * form (`lowSJws`): hash or store THIS, so the two S halves of one signature are one record.
 * Anything else is returned as it is.
 */
export function withLowSSignature<T>(record: T): T {
  if (typeof record !== "object" || record === null || Array.isArray(record)) return record;
  const sig = (record as { signature?: unknown }).signature;
  if (typeof sig !== "object" || sig === null || typeof (sig as JwsObject).protected !== "string" || typeof (sig as JwsObject).signature !== "string")
    return record;
  const low = lowSJws(sig as JwsObject);
  return low === sig ? record : { ...record, signature: low };
}
