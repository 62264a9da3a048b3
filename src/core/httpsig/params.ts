/**
 * The Web Bot Auth profile of RFC 9421 HTTP message signatures, as Writ signs and checks it
 * (docs/reference/request-signatures.md): one signature labelled `sig1` (any label is read),
 * tag `web-bot-auth`, parameters `created`, `expires`, `keyid` (the RFC 7638 JWK SHA-256
 * thumbprint, base64url), `alg`, `nonce` (64 random bytes, base64), and the covered components
 * `@authority` plus `signature-agent` (the whole field) when the request carries `Signature-Agent`.
 * The key directory is the draft's JWKS at /.well-known/http-message-signatures-directory,
 * media type `application/http-message-signatures-directory+json`, its response signed with
 * tag `http-message-signatures-directory`. Pure.
 */
import { createHash, randomBytes } from "node:crypto";
import { thumbprintInput, type JwsAlg, type PublicJwk } from "../jose/index.js";
import { serializeDictionary } from "structured-headers";
import { canonicalJson, type HashString } from "../canonical/index.js";

/** The tag of an agent's request signature (Web Bot Auth). */
export const REQUEST_TAG = "web-bot-auth";
/** The tag of the key directory's response signature. */
export const DIRECTORY_TAG = "http-message-signatures-directory";
/** Where the key directory is served. */
export const DIRECTORY_PATH = "/.well-known/http-message-signatures-directory";
/** The key directory's media type. */
export const DIRECTORY_MEDIA_TYPE = "application/http-message-signatures-directory+json";
/** The label Writ signs with (and the Signature-Agent dictionary key). */
export const SIGNATURE_LABEL = "sig1";
/** Bytes of a nonce Writ makes. */
export const NONCE_BYTES = 64;
/** Default lifetime of a request signature, seconds. */
export const DEFAULT_LIFETIME_SECONDS = 60;
/** The longest lifetime (`expires - created`) a verifier accepts, seconds. */
export const MAX_LIFETIME_SECONDS = 300;
/** Clock skew a verifier allows either way on `created` and `expires`, seconds. */
export const CLOCK_SKEW_SECONDS = 30;
/** How long the key directory may be cached, and its signature's lifetime, seconds. */
export const DIRECTORY_MAX_AGE_SECONDS = 300;

/** The RFC 9421 algorithm name of a key's one algorithm. */
export type HttpSigAlg = "ed25519" | "ecdsa-p256-sha256";

/** The RFC 9421 algorithm of `jwk` (Ed25519 or P-256). */
export function httpSigAlgOf(jwk: PublicJwk): HttpSigAlg {
  return jwk.kty === "OKP" ? "ed25519" : "ecdsa-p256-sha256";
}

/** The JWS algorithm matching an RFC 9421 algorithm name. */
export function jwsAlgOf(alg: HttpSigAlg): JwsAlg {
  return alg === "ed25519" ? "EdDSA" : "ES256";
}

/** The Web Bot Auth keyid of `jwk`: its RFC 7638 SHA-256 thumbprint, base64url. */
export function webKeyId(jwk: PublicJwk): string {
  return createHash("sha256")
    .update(canonicalJson(thumbprintInput(jwk)))
    .digest("base64url");
}

/** The Writ fingerprint (`sha256:` + hex) a Web Bot Auth keyid names, or undefined when it is not one. */
export function fingerprintOfKeyId(keyid: string): HashString | undefined {
  if (!/^[A-Za-z0-9_-]{43}$/.test(keyid)) return undefined;
  const bytes = Buffer.from(keyid, "base64url");
  if (bytes.length !== 32 || bytes.toString("base64url") !== keyid) return undefined;
  return `sha256:${bytes.toString("hex")}`;
}

/** A fresh nonce: NONCE_BYTES random bytes, base64. */
export function newNonce(): string {
  return randomBytes(NONCE_BYTES).toString("base64");
}

/** The Signature-Agent field value naming `directoryUrl` under `label` (a structured-field dictionary). */
export function signatureAgentValue(directoryUrl: string, label = SIGNATURE_LABEL): string {
  return serializeDictionary(new Map([[label, [directoryUrl, new Map()]]]));
}
