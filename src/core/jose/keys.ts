/**
 * Signing keys: generated, loaded from a private JWK, or derived from a 32-byte Ed25519 seed
 * (the `SVC_LOG_SIGNING_SEED` encoding: 64 hex digits, or 43 characters of unpadded base64url).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { algForJwk, keyId, parsePublicJwk, type JwsAlg, type PublicJwk } from "./jwk.js";
import { JoseError } from "./errors.js";
import type { HashString } from "../canonical/index.js";

/** A private key ready to sign, with its public half and key id. */
export interface Signer {
  readonly alg: JwsAlg;
  readonly kid: HashString;
  readonly publicJwk: PublicJwk;
  readonly privateKey: KeyObject;
}

const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

function fromPrivateKeyObject(privateKey: KeyObject): Signer {
  const pub = createPublicKey(privateKey).export({ format: "jwk" });
  const publicJwk = parsePublicJwk({ kty: pub.kty, crv: pub.crv, x: pub.x, ...(pub.y ? { y: pub.y } : {}) });
  return { alg: algForJwk(publicJwk), kid: keyId(publicJwk), publicJwk, privateKey };
}

/** Decodes a 32-byte seed given as 64 hex digits or unpadded base64url. */
export function decodeSeed(text: string): Buffer {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, "hex");
  if (/^[A-Za-z0-9_-]{43}$/.test(t)) {
    const b = Buffer.from(t, "base64url");
    if (b.length === 32) return b;
  }
  throw new JoseError("KEY_INVALID", "seed must be 32 bytes: 64 hex digits or 43 base64url characters");
}

/** An Ed25519 signer from a 32-byte seed (RFC 8032 private key). */
export function signerFromSeed(seed: Uint8Array | string): Signer {
  const bytes = typeof seed === "string" ? decodeSeed(seed) : Buffer.from(seed);
  if (bytes.length !== 32) throw new JoseError("KEY_INVALID", "Ed25519 seed must be 32 bytes");
  const der = Buffer.concat([ED25519_PKCS8_PREFIX, bytes]);
  return fromPrivateKeyObject(createPrivateKey({ key: der, format: "der", type: "pkcs8" }));
}

/** A signer from a private JWK (Ed25519 or P-256 with `d`). */
export function signerFromJwk(jwk: unknown): Signer {
  if (typeof jwk !== "object" || jwk === null) throw new JoseError("KEY_INVALID", "private key must be a JWK object");
  const j = jwk as Record<string, unknown>;
  if (typeof j.d !== "string") throw new JoseError("KEY_INVALID", "private JWK has no d member");
  const isEd = j.kty === "OKP" && j.crv === "Ed25519";
  const isP256 = j.kty === "EC" && j.crv === "P-256";
  if (!isEd && !isP256) throw new JoseError("KEY_INVALID", "private key must be an Ed25519 or P-256 JWK");
  try {
    const { kid: _k, alg: _a, use: _u, key_ops: _o, ...members } = j;
    return fromPrivateKeyObject(createPrivateKey({ key: members as never, format: "jwk" }));
  } catch (e) {
    if (e instanceof JoseError) throw e;
    throw new JoseError("KEY_INVALID", "private JWK does not load");
  }
}

/** A fresh key pair. */
export function generateSigner(alg: JwsAlg = "EdDSA"): Signer {
  const { privateKey } = alg === "EdDSA" ? generateKeyPairSync("ed25519") : generateKeyPairSync("ec", { namedCurve: "P-256" });
  return fromPrivateKeyObject(privateKey);
}

/** The private JWK of a signer (for writing key files). */
export function privateJwk(signer: Signer): Record<string, string> {
  const j = signer.privateKey.export({ format: "jwk" }) as Record<string, string>;
  return { ...j, kid: signer.kid, alg: signer.alg };
}
