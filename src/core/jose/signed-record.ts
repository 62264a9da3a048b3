/**
 * Signed records: the ONE way Writ signs and verifies a JSON record (mandates,
 * acknowledgements, agreement and delegation revocations, revocation pushes, tree heads,
 * subscriber alerts), docs/formats.md "Signatures".
 *
 * A signed record's signature is a flattened JWS whose protected header names `alg` (EdDSA or
 * ES256), `typ` (one per record kind) and `kid`, and whose payload is EXACTLY the RFC 8785
 * (JCS) canonical bytes of a JSON object: the record without its `signature` member.
 *
 * `verifySignedRecord` checks, in this order, and refuses with a JoseError naming the first
 * failure:
 *  1. the token alone (`inspectSignedRecord`, no key needed): the JWS object's shape
 *     (JWS_MALFORMED); `alg` EdDSA or ES256, so `none` and HS256 are refused before any
 *     cryptography (JWS_ALG_NOT_ALLOWED); `typ` equals the expected one (JWS_TYP_MISMATCH); no
 *     `crit` (JWS_CRIT_UNSUPPORTED); no key-carrying header (JWS_HEADER_NOT_ALLOWED); the
 *     payload is a JSON object in I-JSON text whose canonical form is the payload byte for
 *     byte: no whitespace, members in JCS order, `1` not `1.0`, no duplicate member
 *     (JWS_PAYLOAD_NOT_CANONICAL); and, when the caller holds the record, the payload is the
 *     canonical record (JWS_PAYLOAD_MISMATCH); the signature is in the one encoding accepted
 *     for its `alg`: canonical base64url, 64 bytes, ES256 `1 <= r, s < n` (both S halves:
 *     a caller that hashes or stores a signed record takes `withLowSSignature` of it, so the
 *     high-S twin is the same record), EdDSA `S < L` (JWS_SIGNATURE_NOT_CANONICAL);
 *  2. the key(s): each is an Ed25519 or P-256 PUBLIC JWK, never one with a private member
 *     (JWK_PRIVATE, JWK_INVALID, JWK_UNSUPPORTED); a `kid` in the header names one of them
 *     (JWS_KID_MISMATCH); `alg` fits that key (JWS_ALG_NOT_ALLOWED); the signature verifies
 *     (JWS_SIGNATURE_INVALID).
 * The key always comes from the verifier, never from the token.
 */
import { canonicalBytes, findLoneSurrogate } from "../canonical/index.js";
import { JoseError } from "./errors.js";
import { algForJwk, keyId, parsePublicJwk, type JwsAlg, type PublicJwk } from "./jwk.js";
import { checkJwsHeader, decodeJwsHeader, jwsSignatureProblem, parseJwsObject, signJws, verifyJwsSignature, type JwsHeader, type JwsObject } from "./jws.js";
import type { Signer } from "./keys.js";

/** What a signed record must be. */
export interface SignedRecordCheck {
  /** The protected-header `typ` of this kind of record. */
  typ: string;
  /**
   * When the caller holds the record: the record WITHOUT its `signature` member. The payload
   * must then be exactly its canonical bytes.
   */
  record?: unknown;
}

/** What verification establishes about a signed record. */
export interface VerifiedRecord {
  header: JwsHeader & { alg: JwsAlg };
  /** The payload as parsed: the signed record without its signature. */
  payload: Record<string, unknown>;
  /** The payload bytes (its canonical form). */
  bytes: Buffer;
}

/** A verified record and the key that verified it. */
export interface VerifiedSignedRecord extends VerifiedRecord {
  key: PublicJwk;
}

function refuse(code: ConstructorParameters<typeof JoseError>[0], message: string): never {
  throw new JoseError(code, message);
}

function parsePayload(bytes: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return refuse("JWS_PAYLOAD_NOT_CANONICAL", "JWS payload is not JSON in UTF-8");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return refuse("JWS_PAYLOAD_NOT_CANONICAL", "JWS payload is not a JSON object");
  }
  if (findLoneSurrogate(parsed) !== undefined) refuse("JWS_PAYLOAD_NOT_CANONICAL", "JWS payload holds a lone surrogate (not I-JSON)");
  return parsed as Record<string, unknown>;
}

/**
 * Step 1 of `verifySignedRecord`: everything that can be checked without a key (see the module
 * comment). A caller that must answer alike whether or not it holds a key (an unknown id and
 * a bad signature) runs this first and reports its failures, then treats every key failure as
 * one. Throws JoseError.
 */
export function inspectSignedRecord(input: unknown, check: SignedRecordCheck): VerifiedRecord {
  const jws = parseJwsObject(input);
  const header = checkJwsHeader(decodeJwsHeader(jws), check.typ);
  const bytes = Buffer.from(jws.payload, "base64url");
  let payload: Record<string, unknown>;
  if (check.record !== undefined) {
    let want: Buffer;
    try {
      want = canonicalBytes(check.record);
    } catch {
      return refuse("JWS_PAYLOAD_MISMATCH", "the signed record has no canonical JSON form");
    }
    // The canonical record is canonical JSON, so equal bytes are also the payload's canonical form.
    if (!want.equals(bytes)) {
      // Name a non-canonical payload as such, whatever it holds.
      if (!canonicalBytes(parsePayload(bytes)).equals(bytes)) refuse("JWS_PAYLOAD_NOT_CANONICAL", "JWS payload is not the RFC 8785 canonical form of its JSON");
      refuse("JWS_PAYLOAD_MISMATCH", "JWS payload is not the canonical bytes of the signed record");
    }
    payload = check.record as Record<string, unknown>;
  } else {
    payload = parsePayload(bytes);
    if (!canonicalBytes(payload).equals(bytes)) refuse("JWS_PAYLOAD_NOT_CANONICAL", "JWS payload is not the RFC 8785 canonical form of its JSON");
  }
  const badSignature = jwsSignatureProblem(header.alg, jws.signature);
  if (badSignature !== undefined) refuse("JWS_SIGNATURE_NOT_CANONICAL", `JWS ${badSignature}`);
  return { header, payload, bytes };
}

function publicKeys(keys: unknown): PublicJwk[] {
  const list = Array.isArray(keys) ? (keys as unknown[]) : [keys];
  if (list.length === 0) refuse("JWK_INVALID", "no verifying key");
  return list.map((k) => parsePublicJwk(k));
}

/**
 * Verifies a signed record with `keys` (one untrusted public JWK, or a list of them: the one
 * the header's `kid` names, else each whose type fits `alg`). Returns the header, the parsed
 * payload and the key that verified; throws JoseError with the first failure (module comment).
 */
export async function verifySignedRecord(input: unknown, keys: unknown, check: SignedRecordCheck): Promise<VerifiedSignedRecord> {
  const inspected = inspectSignedRecord(input, check);
  const jws = parseJwsObject(input);
  const candidates = publicKeys(keys);
  const { kid, alg } = inspected.header;
  let usable = candidates;
  if (kid !== undefined) {
    usable = candidates.filter((k) => keyId(k) === kid);
    if (usable.length === 0) refuse("JWS_KID_MISMATCH", "JWS kid does not name the verifying key");
  }
  const fitting = usable.filter((k) => algForJwk(k) === alg);
  if (fitting.length === 0) refuse("JWS_ALG_NOT_ALLOWED", `JWS alg ${alg} does not fit the verifying key`);
  for (const key of fitting) {
    if (await verifyJwsSignature(jws, key, alg)) return { ...inspected, key };
  }
  return refuse("JWS_SIGNATURE_INVALID", "JWS signature does not verify");
}

/** True when `verifySignedRecord` accepts; never throws. */
export async function signedRecordVerifies(input: unknown, keys: unknown, check: SignedRecordCheck): Promise<boolean> {
  try {
    await verifySignedRecord(input, keys, check);
    return true;
  } catch {
    return false;
  }
}

/**
 * Signs `record` (WITHOUT its `signature` member) as a record of kind `typ`: a flattened JWS
 * over its canonical bytes. Throws TypeError for a value JSON cannot carry.
 */
export function signRecord(record: object, signer: Signer, typ: string): Promise<JwsObject> {
  return signJws(canonicalBytes(record), signer, typ);
}

/** `record` without its top-level `signature` member: what a record's signature covers. */
export function unsignedPart<T extends object>(record: T): Omit<T, "signature"> {
  const { signature: _omit, ...rest } = record as T & { signature?: unknown };
  return rest as Omit<T, "signature">;
}
