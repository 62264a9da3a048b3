/**
 * The key directory (the Web Bot Auth directory draft's JWKS, ./params.ts): its body, and the
 * RFC 9421 signature of its response. Writ answers for the keys it lists, so the response is
 * signed by Writ's log signing key (published at /.well-known/svc-keys.json), not by each
 * listed key; the signature covers `"@authority";req` (the draft's component) and
 * `content-digest` (RFC 9530, SHA-256 of the body), so the key list itself is what is signed.
 * The signature lives DIRECTORY_MAX_AGE_SECONDS: a verifier refuses a copy older than that,
 * which bounds how long a suspended agent's key outlives its suspension in a cache. Pure.
 */
import { createHash } from "node:crypto";
import { httpbis } from "http-message-signatures";
import type { PublicJwk, Signer } from "../jose/index.js";
import { DIRECTORY_MAX_AGE_SECONDS, DIRECTORY_TAG, httpSigAlgOf, newNonce, webKeyId } from "./params.js";
import { signBytes } from "./sign.js";
import { checkSignature, type SignatureCheck } from "./verify.js";

/** A key of the directory: the agent's public JWK, its keyid as `kid`, and who the agent is. */
export type DirectoryKey = PublicJwk & { kid: string; agent_id: string; operator_org_id: string; verification_level?: string };

/** The directory body. */
export interface KeyDirectory {
  keys: DirectoryKey[];
}

/** One directory entry from a registered agent. */
export function directoryKey(agent: { agent_id: string; org_id: string; public_key: PublicJwk; verification_level?: string }): DirectoryKey {
  const j = agent.public_key;
  const jwk: PublicJwk = j.kty === "OKP" ? { kty: j.kty, crv: j.crv, x: j.x } : { kty: j.kty, crv: j.crv, x: j.x, y: j.y };
  return {
    ...jwk,
    kid: webKeyId(jwk),
    agent_id: agent.agent_id,
    operator_org_id: agent.org_id,
    ...(agent.verification_level !== undefined ? { verification_level: agent.verification_level } : {}),
  };
}

/** The RFC 9530 Content-Digest of `body` (sha-256). */
export function contentDigest(body: string | Uint8Array): string {
  return `sha-256=:${createHash("sha256").update(body).digest("base64")}:`;
}

/** The signed fields of a directory answer. */
export type DirectoryFields = {
  "content-digest": string;
  "signature-input": string;
  signature: string;
};

/** The response fields of a directory answer: Content-Digest, Signature-Input and Signature. */
export async function signDirectory(body: string, opts: { url: string; signer: Signer; now: Date }): Promise<DirectoryFields> {
  const digest = contentDigest(body);
  const res = { status: 200, headers: { "content-digest": digest } as Record<string, string | string[]> };
  const req = { method: "GET", url: opts.url, headers: {} };
  const signed = await httpbis.signMessage(
    {
      key: { id: webKeyId(opts.signer.publicJwk), alg: httpSigAlgOf(opts.signer.publicJwk), sign: async (data) => signBytes(opts.signer, data) },
      name: "sig1",
      params: ["created", "expires", "keyid", "alg", "nonce", "tag"],
      fields: ['"@authority";req', "content-digest"],
      paramValues: { created: opts.now, expires: new Date(opts.now.getTime() + DIRECTORY_MAX_AGE_SECONDS * 1000), nonce: newNonce(), tag: DIRECTORY_TAG },
    },
    res,
    req,
  );
  const h = signed.headers as Record<string, string>;
  return { "content-digest": digest, "signature-input": String(h["Signature-Input"]), signature: String(h.Signature) };
}

/** The outcome of checking a fetched directory. */
export type DirectoryCheck = { ok: true; directory: KeyDirectory; expires: number } | { ok: false; code: "KEY_DIRECTORY_INVALID"; message: string };

function isDirectoryKey(k: unknown): k is DirectoryKey {
  if (typeof k !== "object" || k === null) return false;
  const o = k as Record<string, unknown>;
  const strings = ["kid", "agent_id", "operator_org_id", "x", "crv", "kty"].every((n) => typeof o[n] === "string");
  return strings && ((o.kty === "OKP" && o.crv === "Ed25519") || (o.kty === "EC" && o.crv === "P-256" && typeof o.y === "string")) && !("d" in o);
}

/**
 * Checks a fetched directory answer: signed (tag http-message-signatures-directory) by
 * `writKey` over the request's authority and the body's digest, not expired, the body a JWKS
 * whose every `kid` is its key's thumbprint. Anything else is KEY_DIRECTORY_INVALID.
 */
export async function verifyDirectory(
  answer: { url: string; headers: Record<string, string | string[]>; body: string },
  opts: { writKey: PublicJwk; nowMs: number },
): Promise<DirectoryCheck> {
  const bad = (message: string): DirectoryCheck => ({ ok: false, code: "KEY_DIRECTORY_INVALID", message });
  const headerOf = (n: string) => Object.entries(answer.headers).find(([k]) => k.toLowerCase() === n)?.[1];
  if (String(headerOf("content-digest") ?? "") !== contentDigest(answer.body)) return bad("the directory's Content-Digest does not match its body");
  const writKid = webKeyId(opts.writKey);
  const check: SignatureCheck<PublicJwk> = await checkSignature(
    { request: { method: "GET", url: answer.url, headers: {} }, response: { status: 200, headers: answer.headers } },
    {
      keyFor: (kid) => (kid === writKid ? opts.writKey : undefined),
      jwkOf: (k) => k,
      nowMs: opts.nowMs,
      tag: DIRECTORY_TAG,
      required: ["content-digest"],
      authority: ['"@authority";req'],
    },
  );
  if (!check.ok) return bad(`the directory's signature is refused (${check.code}): ${check.message}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return bad("the directory body is not JSON");
  }
  const keys = (parsed as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || !keys.every(isDirectoryKey))
    return bad("the directory body is not a JWKS of Ed25519 or P-256 public keys with kid, agent_id and operator_org_id");
  for (const k of keys) if (webKeyId(k) !== k.kid) return bad(`directory key ${k.kid} is not its key's thumbprint`);
  return { ok: true, directory: { keys }, expires: check.facts.expires };
}
