/**
 * Checks an RFC 9421 signature of the Web Bot Auth profile (./params.ts) on a request, or on a
 * response with its request (the key directory). The signature base is built by the
 * `http-message-signatures` package; the bytes are checked by Writ's one signature primitive
 * (verifySignatureBytes; a P-256 signature is taken in its low-S form, since RFC 9421 allows
 * either). Pure: the clock and the key lookup are the caller's.
 *
 * Order, each refusal with its reason code: the fields are present (REQUEST_SIGNATURE_MISSING)
 * and parse, the signature with the expected tag carries created, expires, keyid and nonce and
 * covers `@authority` (and `signature-agent` when the message has that field), its lifetime is
 * at most MAX_LIFETIME_SECONDS and `created` is not in the future (REQUEST_SIGNATURE_MALFORMED);
 * `expires` has not passed (REQUEST_SIGNATURE_EXPIRED); the keyid names a key
 * (REQUEST_KEY_UNKNOWN); the signature verifies over the base (REQUEST_SIGNATURE_INVALID).
 * Replay (the nonce) is the caller's to check: it needs a store shared across verifiers.
 */
import { httpbis } from "http-message-signatures";
import { isInnerList, parseDictionary, serializeItem, serializeList, type InnerList } from "structured-headers";
import { lowS, verifySignatureBytes, type PublicJwk } from "../jose/index.js";
import { CLOCK_SKEW_SECONDS, MAX_LIFETIME_SECONDS, REQUEST_TAG, httpSigAlgOf, jwsAlgOf } from "./params.js";
import type { HttpRequestLike } from "./sign.js";

/** Why a signature is refused (reason codes of src/core/evaluate/reasons.ts). */
export type SignatureRefusal =
  "REQUEST_SIGNATURE_MISSING" | "REQUEST_SIGNATURE_MALFORMED" | "REQUEST_SIGNATURE_EXPIRED" | "REQUEST_KEY_UNKNOWN" | "REQUEST_SIGNATURE_INVALID";

/** What a signature says of itself. */
export interface SignatureFacts {
  label: string;
  keyid: string;
  /** Seconds since the epoch. */
  created: number;
  expires: number;
  nonce: string;
  tag: string;
  alg?: string;
  /** The covered components, serialized (e.g. `"@authority"`, `"signature-agent";key="sig1"`). */
  components: string[];
  /** The Signature-Agent field of the message, when it has one. */
  signature_agent?: string;
}

/** The outcome of a check: the key and facts, or a refusal with its reason. */
export type SignatureCheck<K> =
  { ok: true; key: K; jwk: PublicJwk; facts: SignatureFacts } | { ok: false; code: SignatureRefusal; message: string; facts?: SignatureFacts };

/** Options of a check. */
export interface CheckOptions<K> {
  /** The key a keyid names (with whatever the caller keeps beside it), or undefined. */
  keyFor(keyid: string): K | undefined | Promise<K | undefined>;
  /** The public JWK of a found key. */
  jwkOf(key: K): PublicJwk;
  /** The verifier's clock, ms since the epoch. */
  nowMs: number;
  /** The tag to look for (default `web-bot-auth`). */
  tag?: string;
  /** Components that must be covered besides `@authority` (e.g. `content-digest`). */
  required?: string[];
  /** Covered component names `@authority` may be spelled as (default `"@authority"`). */
  authority?: string[];
}

type Headers = Record<string, string | string[]>;

function field(headers: Headers, name: string): string | undefined {
  const values = Object.entries(headers)
    .filter(([k]) => k.toLowerCase() === name)
    .map(([, v]) => (Array.isArray(v) ? v.join(", ") : v));
  return values.length === 0 ? undefined : values.join(", ");
}

const refuse = (code: SignatureRefusal, message: string, facts?: SignatureFacts): SignatureCheck<never> =>
  facts ? { ok: false, code, message, facts } : { ok: false, code, message };

/**
 * Checks the signature tagged `opts.tag` on `message` (a request; or a response given with the
 * request it answers, for components with `;req`). See the module comment.
 */
export async function checkSignature<K>(
  message: { request: HttpRequestLike; response?: { status: number; headers: Headers } },
  opts: CheckOptions<K>,
): Promise<SignatureCheck<K>> {
  const signed = message.response ?? message.request;
  const inputField = field(signed.headers, "signature-input");
  const sigField = field(signed.headers, "signature");
  if (inputField === undefined || sigField === undefined) return refuse("REQUEST_SIGNATURE_MISSING", "the message has no Signature and Signature-Input fields");
  let inputs, sigs;
  try {
    inputs = parseDictionary(inputField);
    sigs = parseDictionary(sigField);
  } catch {
    return refuse("REQUEST_SIGNATURE_MALFORMED", "Signature or Signature-Input is not a structured-field dictionary");
  }
  const tag = opts.tag ?? REQUEST_TAG;
  const entry = [...inputs.entries()].find(([, v]) => isInnerList(v) && v[1].get("tag") === tag);
  if (!entry) return refuse("REQUEST_SIGNATURE_MISSING", `the message has no signature with tag ${tag}`);
  const [label, input] = entry as [string, InnerList];
  const p = input[1];
  const components = input[0].map((i) => serializeItem(i));
  const str = (k: string) => (typeof p.get(k) === "string" ? (p.get(k) as string) : undefined);
  const int = (k: string) => (Number.isSafeInteger(p.get(k)) ? (p.get(k) as number) : undefined);
  const keyid = str("keyid");
  const created = int("created");
  const expires = int("expires");
  const nonce = str("nonce");
  const agentField = field(message.request.headers, "signature-agent");
  const alg = str("alg");
  const missing = [
    ["keyid", keyid],
    ["created", created],
    ["expires", expires],
    ["nonce", nonce],
  ]
    .filter(([, v]) => v === undefined)
    .map(([k]) => k);
  if (keyid === undefined || created === undefined || expires === undefined || nonce === undefined) {
    return refuse("REQUEST_SIGNATURE_MALFORMED", `signature ${label} lacks ${missing.join(", ")}`);
  }
  const facts: SignatureFacts = {
    label,
    keyid,
    created,
    expires,
    nonce,
    tag,
    components,
    ...(alg !== undefined ? { alg } : {}),
    ...(agentField !== undefined ? { signature_agent: agentField } : {}),
  };
  const names = input[0].map((i) => String(i[0]));
  const authority = opts.authority ?? ['"@authority"'];
  if (!components.some((c) => authority.includes(c))) return refuse("REQUEST_SIGNATURE_MALFORMED", `signature ${label} does not cover @authority`, facts);
  if (agentField !== undefined && !names.includes("signature-agent"))
    return refuse("REQUEST_SIGNATURE_MALFORMED", `signature ${label} does not cover the Signature-Agent field the request carries`, facts);
  for (const r of opts.required ?? []) if (!names.includes(r)) return refuse("REQUEST_SIGNATURE_MALFORMED", `signature ${label} does not cover ${r}`, facts);
  const now = Math.floor(opts.nowMs / 1000);
  if (expires <= created || expires - created > MAX_LIFETIME_SECONDS) {
    return refuse(
      "REQUEST_SIGNATURE_MALFORMED",
      `signature ${label} lives ${expires - created} seconds (expires - created); at most ${MAX_LIFETIME_SECONDS} and more than 0 are accepted`,
      facts,
    );
  }
  if (created > now + CLOCK_SKEW_SECONDS)
    return refuse("REQUEST_SIGNATURE_MALFORMED", `signature ${label} was created ${created - now} seconds in the future`, facts);
  if (expires < now - CLOCK_SKEW_SECONDS)
    return refuse("REQUEST_SIGNATURE_EXPIRED", `signature ${label} expired at ${new Date(expires * 1000).toISOString()}`, facts);
  const key = await opts.keyFor(keyid);
  if (key === undefined) return refuse("REQUEST_KEY_UNKNOWN", `keyid ${keyid} names no key in the directory`, facts);
  const jwk = opts.jwkOf(key);
  if (alg !== undefined && alg !== httpSigAlgOf(jwk))
    return refuse("REQUEST_SIGNATURE_MALFORMED", `signature ${label} says alg ${alg}; the key's algorithm is ${httpSigAlgOf(jwk)}`, facts);
  const sig = sigs.get(label);
  if (!sig || isInnerList(sig) || !(sig[0] instanceof ArrayBuffer))
    return refuse("REQUEST_SIGNATURE_MALFORMED", `Signature has no byte sequence for label ${label}`, facts);
  let base: string;
  try {
    const parts = message.response
      ? httpbis.createSignatureBase({ fields: components }, message.response, message.request)
      : httpbis.createSignatureBase({ fields: components }, message.request);
    parts.push(['"@signature-params"', [serializeList([input])]]);
    base = httpbis.formatSignatureBase(parts);
  } catch (e) {
    return refuse("REQUEST_SIGNATURE_INVALID", `the signature base cannot be built: ${e instanceof Error ? e.message : String(e)}`, facts);
  }
  const jwsAlg = jwsAlgOf(httpSigAlgOf(jwk));
  if (!verifySignatureBytes(jwk, jwsAlg, Buffer.from(base, "latin1"), lowS(jwsAlg, new Uint8Array(sig[0])))) {
    return refuse("REQUEST_SIGNATURE_INVALID", `signature ${label} does not verify with key ${keyid} over the covered components`, facts);
  }
  return { ok: true, key, jwk, facts };
}
