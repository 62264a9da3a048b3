/**
 * Signs an HTTP request as an agent (RFC 9421 with the Web Bot Auth parameters, ./params.ts):
 * the mechanics are the `http-message-signatures` package's; the signature bytes are Writ's one
 * signing primitive (Ed25519, or P-256 in its low-S form). Pure apart from the clock and the
 * random nonce, both of which a caller may pass.
 */
import { sign } from "node:crypto";
import { httpbis } from "http-message-signatures";
import { lowS, type Signer } from "../jose/index.js";
import { DEFAULT_LIFETIME_SECONDS, REQUEST_TAG, SIGNATURE_LABEL, httpSigAlgOf, newNonce, signatureAgentValue, webKeyId } from "./params.js";

/** A request to sign or verify: method, absolute URL, header fields (names in any case). */
export interface HttpRequestLike {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
}

/** What `signRequest` signs with. */
export interface SignRequestOptions {
  /** The agent's key (its registered public key's private half). */
  signer: Signer;
  /** The URL of the key directory that lists the key; sent as `Signature-Agent` and covered. */
  directoryUrl?: string;
  /** When the signature is made (default now). */
  created?: Date;
  /** Lifetime in seconds (default 60; verifiers accept at most 300). */
  lifetimeSeconds?: number;
  /** The nonce (default 64 random bytes, base64). */
  nonce?: string;
  /** Components to cover besides `@authority` and `signature-agent` (e.g. `@method`, `@path`, `content-digest`). */
  components?: string[];
}

/** The header fields to add to a request: `Signature`, `Signature-Input` and, with a directory, `Signature-Agent`. */
export type SignatureFields = {
  signature: string;
  "signature-input": string;
  "signature-agent"?: string;
};

function header(headers: Record<string, string | string[]>, name: string): string | string[] | undefined {
  const k = Object.keys(headers).find((h) => h.toLowerCase() === name);
  return k === undefined ? undefined : headers[k];
}

/** `signer`'s signature of `data` (Ed25519, or P-256 IEEE P1363 in its low-S form). */
export function signBytes(signer: Signer, data: Uint8Array): Buffer {
  const raw = signer.alg === "EdDSA" ? sign(null, data, signer.privateKey) : sign("sha256", data, { key: signer.privateKey, dsaEncoding: "ieee-p1363" });
  return lowS(signer.alg, raw);
}

/** The header fields that sign `request` (see SignRequestOptions); the request itself is not changed. */
export async function signRequest(request: HttpRequestLike, opts: SignRequestOptions): Promise<SignatureFields> {
  const created = opts.created ?? new Date();
  const lifetime = opts.lifetimeSeconds ?? DEFAULT_LIFETIME_SECONDS;
  if (!Number.isInteger(lifetime) || lifetime < 1) throw new RangeError("lifetimeSeconds must be a positive integer");
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(request.headers)) if (!["signature", "signature-input", "signature-agent"].includes(k.toLowerCase())) headers[k] = v;
  const agent = opts.directoryUrl !== undefined ? signatureAgentValue(opts.directoryUrl) : undefined;
  if (agent !== undefined) headers["signature-agent"] = agent;
  const fields = ["@authority", ...(opts.components ?? []).filter((c) => c !== "@authority" && !c.startsWith('"signature-agent"'))];
  // The whole field, not `;key="sig1"`: it binds every member, and Cloudflare's
  // http-message-sig 0.3 builds the base of a `key` component from the whole field (it ignores
  // the parameter), so only this form verifies everywhere.
  if (agent !== undefined) fields.push('"signature-agent"');
  const signer = opts.signer;
  const signed = await httpbis.signMessage(
    {
      key: { id: webKeyId(signer.publicJwk), alg: httpSigAlgOf(signer.publicJwk), sign: async (data) => signBytes(signer, data) },
      name: SIGNATURE_LABEL,
      params: ["created", "expires", "keyid", "alg", "nonce", "tag"],
      fields,
      paramValues: { created, expires: new Date(created.getTime() + lifetime * 1000), nonce: opts.nonce ?? newNonce(), tag: REQUEST_TAG },
    },
    { method: request.method, url: request.url, headers },
  );
  const out: SignatureFields = { signature: String(header(signed.headers, "signature")), "signature-input": String(header(signed.headers, "signature-input")) };
  if (agent !== undefined) out["signature-agent"] = agent;
  return out;
}
