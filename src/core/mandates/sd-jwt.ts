/**
 * Verification of a presented mandate SD-JWT (RFC 9901, SD-JWT VC): the issuer's signature
 * against a trusted key, every disclosure against its digest, and the key-binding JWT signed
 * by the key in `cnf`. Pure: the caller supplies the trusted keys, the expected audience and
 * nonce, and the clock. Parsing, digest resolution and the key-binding check run in
 * `@sd-jwt/core` for parsing and the key-binding signature; disclosures are resolved by Writ's one
 * resolver (./sd-jwt-disclosures.ts, RFC 9901 §7.1, also what `decodeMandatePresentation` and
 * `writ mandate inspect` show); signatures are verified with jose (EdDSA and ES256 only). What
 * the library leaves to its caller is checked here, explicitly:
 *
 * - headers: issuer `typ` `dc+sd-jwt` (or its earlier name `vc+sd-jwt`), KB `typ` `kb+jwt`;
 *   `alg` EdDSA or ES256 and fitting the key; no `crit`, no key-carrying header (the issuer key
 *   comes from the registry, the binding key from `cnf`); the issuer header names its `kid`;
 * - disclosures (./sd-jwt-disclosures.ts): `_sd_alg` is sha-256; recursive disclosures and array
 *   elements are resolved; every disclosure is referenced exactly once (an altered or foreign
 *   disclosure is refused, not ignored as the library does); a digest in an object's `_sd`
 *   without a disclosure is withheld and refused in the payload and inside the constraint
 *   claims (./withheld-constraints.ts: it may narrow the grant), a decoy elsewhere (accepted,
 *   listed in `undisclosed`); an array element without one is withheld (refused: Writ maps
 *   every constraint and payee);
 * - key binding: `aud` equals the expected audience, `nonce` the expected nonce (when one is
 *   expected), `iat` is at most `kbMaxAgeMs` old and not in the future (60 s skew), and
 *   `sd_hash` is the hash of the presentation without the KB-JWT.
 *
 * One mandate, one identity: every part of the presentation is canonical base64url (a spare bit
 * set in a last character is refused), signatures are checked by the one primitive of
 * src/core/jose (both S halves of an ES256 signature verify), and the mandate's identity
 * (`mandateHash`) is the hash of what the issuer signed (the signing input), never of the
 * signature's text; `issuerJwtHash` is taken over the low-S spelling of the signature.
 *
 * The mandate's own times (`exp`, `nbf`, `iat`) are not checked here: the import
 * (./ap2.ts) bounds the grant with them and refuses an expired mandate.
 */
import { SDJwt } from "@sd-jwt/core";
import { digest } from "@sd-jwt/crypto-nodejs";
import { describeInexactNumber, findInexactNumber, sha256, sha256Hash, type HashString } from "../canonical/index.js";
import {
  ALLOWED_ALGS,
  JoseError,
  algForJwk,
  isCanonicalBase64url,
  jwsSignatureProblem,
  lowSSignatureText,
  parsePublicJwk,
  verifyJwsInput,
  type JwsAlg,
  type PublicJwk,
} from "../jose/index.js";
import { SD_ALG, resolveDisclosures, type DisclosureResolution, type UndisclosedDigest } from "./sd-jwt-disclosures.js";
import type { MandateProblem, MandateProblemCode } from "./sd-jwt-problems.js";
import { withheldConstraintProblems } from "./withheld-constraints.js";

/** Accepted `typ` of the issuer-signed JWT. */
export const ISSUER_JWT_TYPES: readonly string[] = ["dc+sd-jwt", "vc+sd-jwt"];
/** `typ` of the key-binding JWT. */
export const KB_JWT_TYP = "kb+jwt";
/** Longest presentation accepted, in characters. */
export const MAX_SD_JWT_LENGTH = 65_536;
/** Most disclosures accepted. */
export const MAX_DISCLOSURES = 256;
/** Default freshness window of the key-binding JWT's `iat`. */
export const DEFAULT_KB_MAX_AGE_MS = 300_000;
/** How far in the future a key-binding JWT's `iat` may be (clock skew). */
export const KB_FUTURE_SKEW_MS = 60_000;

const FORBIDDEN_HEADERS = ["jwk", "jku", "x5c", "x5u", "x5t", "x5t#S256", "crit"];

/** A key trusted to issue mandates, and who registered it. */
export interface TrustedIssuerKey {
  /** The `kid` an issuer header names to select it. */
  kid: string;
  publicKey: PublicJwk;
  /** The registry organization that registered it. */
  orgId: string;
}

/** What a presentation says, decoded but not verified. */
export interface DecodedMandate {
  /** The issuer JWT's protected header. */
  header: Record<string, unknown>;
  /** The disclosed claims (digests resolved, `_sd_alg` removed). */
  claims: Record<string, unknown>;
  /** Digests without a disclosure: decoys or claims left out (`claim`), withheld array elements (`element`). */
  undisclosed: UndisclosedDigest[];
  /** The key-binding JWT, when present. */
  kb?: { header: Record<string, unknown>; payload: Record<string, unknown> };
  /**
   * `sha256:` of the issuer JWT's signing input `<header>.<payload>` (both canonical base64url),
   * i.e. of exactly what the issuer signed: the mandate's identity across presentations and
   * across spellings of its signature (an ECDSA issuer may even sign it twice).
   */
  mandateHash: HashString;
  /** `sha256:` of the issuer-signed JWT text as presented, signature included (recorded, not an identity). */
  issuerJwtHash: HashString;
}

/** Inputs of `verifyMandatePresentation`. */
export interface MandateVerifyOptions {
  /** Keys trusted to issue mandates (the caller may pass only those with the header's kid). */
  issuerKeys: readonly TrustedIssuerKey[];
  /** The audience the key-binding JWT must name; undefined: any non-empty `aud` (offline inspection). */
  audience?: string;
  /** The nonce the key-binding JWT must carry; undefined: any non-empty `nonce`. */
  nonce?: string;
  /** Verification time, epoch ms. */
  now: number;
  /** Oldest accepted key-binding `iat`, ms before `now` (default DEFAULT_KB_MAX_AGE_MS). */
  kbMaxAgeMs?: number;
}

/** The outcome: `problems` is empty exactly when the presentation verifies. */
export interface MandateVerification {
  problems: MandateProblem[];
  /** Present whenever the presentation could be parsed. */
  decoded?: DecodedMandate;
  /** The key whose signature verified. */
  issuer?: TrustedIssuerKey;
  /** The key in `cnf.jwk`, when usable. */
  cnfKey?: PublicJwk;
}

class UnsupportedSdAlg extends Error {}

/** The hash function the library digests disclosures with: sha-256 only. */
function hasher(data: string | ArrayBuffer, alg: string): Uint8Array {
  if (alg !== SD_ALG) throw new UnsupportedSdAlg(alg);
  return digest(data, "sha-256");
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const problem = (code: MandateProblemCode, message: string): MandateProblem => ({ code, message });

/** True when `data` ("header.payload") and `signature` verify with `key` under `alg` (src/core/jose's one primitive). */
function signatureVerifies(key: PublicJwk, alg: string, data: string, signature: string): Promise<boolean> {
  return Promise.resolve((ALLOWED_ALGS as readonly string[]).includes(alg) && verifyJwsInput(key, alg as JwsAlg, data, signature));
}

/** The first part of a presentation that is not canonical base64url, named; undefined when all are. */
function nonCanonicalPart(parts: readonly string[]): string | undefined {
  const last = parts.length - 1;
  for (const [i, part] of parts.entries()) {
    const segments = i === 0 || i === last ? (part === "" ? [] : part.split(".")) : [part];
    const what = i === 0 ? "the issuer JWT" : i === last ? "the key-binding JWT" : `disclosure ${i}`;
    if (segments.some((seg) => !isCanonicalBase64url(seg))) return what;
  }
  return undefined;
}

/** Problems of a JWS header: alg allowed (and fitting `key` when known), no key-carrying header. */
function headerProblems(header: Record<string, unknown>, what: string, code: MandateProblemCode, key?: PublicJwk): MandateProblem[] {
  const out: MandateProblem[] = [];
  const alg = header.alg;
  if (typeof alg !== "string" || !(ALLOWED_ALGS as readonly string[]).includes(alg)) {
    out.push(problem(code, `${what} alg ${JSON.stringify(alg)} is not allowed (EdDSA or ES256 only)`));
  } else if (key && alg !== algForJwk(key)) {
    out.push(problem(code, `${what} alg ${alg} does not fit its ${key.kty} ${key.crv} key`));
  }
  for (const h of FORBIDDEN_HEADERS) {
    if (h in header)
      out.push(problem(code, `${what} header ${h} is not allowed${h === "crit" ? " (no extensions are understood)" : " (keys never come from the token)"}`));
  }
  return out;
}

interface Parsed {
  sdjwt: SDJwt;
  /** The issuer-signed JWT as presented. */
  issuerJwt: string;
  /** The presentation without its key-binding JWT (what `sd_hash` covers). */
  withoutKb: string;
  kbText: string;
  /** The disclosures resolved against the signed payload. */
  resolution: DisclosureResolution;
}

/**
 * The problem of a number in the issuer JWT's payload or a disclosure that a double cannot
 * hold exactly (a budget `50.000000000000001` would be read as 50): claims are read as signed.
 */
function inexactNumberOf(parts: readonly string[]): MandateProblem | undefined {
  const texts: [string, string][] = [["the issuer JWT payload", parts[0]?.split(".")[1] ?? ""]];
  parts.slice(1, -1).forEach((d, i) => texts.push([`disclosure ${i + 1}`, d]));
  for (const [what, encoded] of texts) {
    const found = findInexactNumber(Buffer.from(encoded, "base64url").toString("utf8"));
    if (found) return problem("SD_JWT_MALFORMED", `${what}: ${describeInexactNumber(found, "its value")}`);
  }
  return undefined;
}

/** Splits and decodes a presentation (library parser); throws a problem when it cannot. */
async function parse(text: unknown): Promise<Parsed | MandateProblem> {
  if (typeof text !== "string" || text.length === 0) return problem("SD_JWT_MALFORMED", "the mandate must be an SD-JWT string");
  if (text.length > MAX_SD_JWT_LENGTH) return problem("SD_JWT_MALFORMED", `the mandate is longer than ${MAX_SD_JWT_LENGTH} characters`);
  const last = text.lastIndexOf("~");
  if (last < 0) return problem("SD_JWT_MALFORMED", "an SD-JWT is <issuer-jwt>~<disclosures>~<kb-jwt>: no ~ found");
  const parts = text.split("~");
  if (parts.length - 2 > MAX_DISCLOSURES) return problem("SD_JWT_MALFORMED", `the mandate has more than ${MAX_DISCLOSURES} disclosures`);
  if (parts.slice(0, -1).some((p) => p.length === 0)) return problem("SD_JWT_MALFORMED", "the issuer JWT or a disclosure is empty");
  if ((parts[0] ?? "").split(".").length !== 3) return problem("SD_JWT_MALFORMED", "the issuer JWT is not header.payload.signature");
  const respelled = nonCanonicalPart(parts);
  if (respelled !== undefined) {
    return problem(
      "SD_JWT_MALFORMED",
      `${respelled} is not canonical base64url (padding, or spare bits set in a last character): one mandate has one spelling`,
    );
  }
  try {
    const sdjwt = await SDJwt.fromEncode(text, hasher);
    if (!sdjwt.jwt?.header || !isRecord(sdjwt.jwt.payload)) return problem("SD_JWT_MALFORMED", "the issuer JWT has no header or payload object");
    const inexact = inexactNumberOf(parts);
    if (inexact) return inexact;
    const resolution = resolveDisclosures(sdjwt.jwt.payload, parts.slice(1, -1));
    return { sdjwt, issuerJwt: parts[0] ?? "", withoutKb: text.slice(0, last + 1), kbText: text.slice(last + 1), resolution };
  } catch (e) {
    if (e instanceof UnsupportedSdAlg) return problem("DISCLOSURE_INVALID", `_sd_alg ${JSON.stringify(e.message)} is not supported (sha-256 only)`);
    return problem("SD_JWT_MALFORMED", `the mandate does not decode: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Decodes a presentation without verifying anything (claims as disclosed). */
export async function decodeMandatePresentation(text: unknown): Promise<{ decoded: DecodedMandate } | { problem: MandateProblem }> {
  const p = await parse(text);
  if ("code" in p) return { problem: p };
  return { decoded: decodedOf(p) };
}

function decodedOf({ sdjwt, issuerJwt, resolution }: Parsed): DecodedMandate {
  const jwt = sdjwt.jwt;
  if (!jwt?.header || !jwt.payload) throw new Error("decodedOf needs a parsed SD-JWT");
  const signingInput = issuerJwt.slice(0, issuerJwt.lastIndexOf("."));
  const out: DecodedMandate = {
    header: { ...jwt.header },
    claims: resolution.claims,
    undisclosed: resolution.undisclosed,
    mandateHash: sha256Hash(signingInput),
    // Over the low-S spelling: the two S halves of one ES256 signature are one issuer JWT.
    issuerJwtHash: sha256Hash(`${signingInput}.${lowSSignatureText(jwt.header.alg, issuerJwt.slice(issuerJwt.lastIndexOf(".") + 1))}`),
  };
  const kb = sdjwt.kbJwt;
  if (kb?.header && kb.payload) out.kb = { header: { ...kb.header }, payload: { ...kb.payload } };
  return out;
}

/** The issuer checks: header, trusted key, signature. */
async function checkIssuer({ sdjwt, issuerJwt }: Parsed, keys: readonly TrustedIssuerKey[], out: MandateVerification): Promise<void> {
  const jwt = sdjwt.jwt;
  const header = (jwt?.header ?? {}) as Record<string, unknown>;
  if (typeof header.typ !== "string" || !ISSUER_JWT_TYPES.includes(header.typ)) {
    out.problems.push(problem("ISSUER_TYP_INVALID", `issuer JWT typ ${JSON.stringify(header.typ)} is not ${ISSUER_JWT_TYPES.join(" or ")}`));
  }
  const own = headerProblems(header, "issuer JWT", "ISSUER_HEADER_INVALID");
  out.problems.push(...own);
  const kid = header.kid;
  if (typeof kid !== "string" || kid.length === 0) {
    out.problems.push(problem("ISSUER_HEADER_INVALID", "issuer JWT header names no kid, so no trusted key can be chosen"));
    return;
  }
  const candidates = keys.filter((k) => k.kid === kid);
  if (candidates.length === 0) {
    out.problems.push(problem("ISSUER_UNKNOWN", `issuer key ${JSON.stringify(kid)} is not a trusted issuer key (keys registered by wallet organizations)`));
    return;
  }
  if (own.length > 0 || !jwt?.signature) {
    if (!jwt?.signature) out.problems.push(problem("ISSUER_SIGNATURE_INVALID", "the issuer JWT is unsigned"));
    return;
  }
  // The signing input and signature exactly as presented (the library keeps them private).
  const data = issuerJwt.slice(0, issuerJwt.lastIndexOf("."));
  const signature = issuerJwt.slice(issuerJwt.lastIndexOf(".") + 1);
  const respelled = jwsSignatureProblem(header.alg as JwsAlg, signature);
  if (respelled !== undefined) {
    out.problems.push(problem("ISSUER_SIGNATURE_INVALID", `the issuer signature is refused: ${respelled}`));
    return;
  }
  for (const k of candidates) {
    const fit = headerProblems(header, "issuer JWT", "ISSUER_HEADER_INVALID", k.publicKey);
    if (fit.length === 0 && (await signatureVerifies(k.publicKey, header.alg as string, data, signature))) {
      out.issuer = k;
      return;
    }
  }
  out.problems.push(problem("ISSUER_SIGNATURE_INVALID", `the issuer signature does not verify with trusted key ${JSON.stringify(kid)}`));
}

/** The `cnf.jwk` key of the claims, or a CNF_INVALID problem. */
function cnfKeyOf(claims: Record<string, unknown>): PublicJwk | MandateProblem {
  const cnf = claims.cnf;
  if (!isRecord(cnf) || !("jwk" in cnf)) return problem("CNF_INVALID", "cnf must be {jwk} with the agent's public key");
  try {
    return parsePublicJwk(cnf.jwk);
  } catch (e) {
    if (e instanceof JoseError) return problem("CNF_INVALID", `cnf.jwk: ${e.message}`);
    throw e;
  }
}

/** The key-binding checks (explicit ones first, then the library's signature check). */
async function checkKeyBinding(
  sdjwt: SDJwt,
  withoutKb: string,
  kbText: string,
  cnfKey: PublicJwk | undefined,
  opts: MandateVerifyOptions,
  out: MandateVerification,
): Promise<void> {
  const kb = sdjwt.kbJwt;
  if (kbText.length === 0 || !kb?.header || !isRecord(kb.payload)) {
    out.problems.push(problem("KB_JWT_MISSING", "the mandate carries no key-binding JWT: the agent's key must sign the presentation"));
    return;
  }
  const h = kb.header as Record<string, unknown>;
  const p = kb.payload as Record<string, unknown>;
  const before = out.problems.length;
  if (h.typ !== KB_JWT_TYP) out.problems.push(problem("KB_JWT_INVALID", `key-binding JWT typ ${JSON.stringify(h.typ)} is not ${KB_JWT_TYP}`));
  out.problems.push(...headerProblems(h, "key-binding JWT", "KB_JWT_INVALID", cnfKey));
  for (const c of ["aud", "nonce", "sd_hash"]) {
    if (typeof p[c] !== "string" || (p[c] as string).length === 0)
      out.problems.push(problem("KB_JWT_INVALID", `key-binding JWT claim ${c} must be a non-empty string`));
  }
  if (!Number.isSafeInteger(p.iat)) out.problems.push(problem("KB_JWT_INVALID", "key-binding JWT claim iat must be an integer (seconds)"));
  if (out.problems.length > before) return;

  if (opts.audience !== undefined && p.aud !== opts.audience) {
    out.problems.push(problem("KB_JWT_AUDIENCE_MISMATCH", `key-binding JWT aud ${JSON.stringify(p.aud)} is not ${JSON.stringify(opts.audience)}`));
  }
  if (opts.nonce !== undefined && p.nonce !== opts.nonce) {
    out.problems.push(problem("KB_JWT_NONCE_MISMATCH", `key-binding JWT nonce ${JSON.stringify(p.nonce)} is not the expected nonce`));
  }
  const iatMs = (p.iat as number) * 1000;
  const maxAge = opts.kbMaxAgeMs ?? DEFAULT_KB_MAX_AGE_MS;
  if (iatMs < opts.now - maxAge || iatMs > opts.now + KB_FUTURE_SKEW_MS) {
    out.problems.push(
      problem(
        "KB_JWT_STALE",
        `key-binding JWT iat ${new Date(iatMs).toISOString()} is not within ${maxAge / 1000} s before ${new Date(opts.now).toISOString()}`,
      ),
    );
  }
  const want = sha256(withoutKb).toString("base64url");
  if (p.sd_hash !== want)
    out.problems.push(problem("KB_JWT_SD_HASH_MISMATCH", "key-binding JWT sd_hash is not the hash of the presented SD-JWT (issuer JWT and disclosures)"));
  if (!cnfKey) return;
  try {
    await kb.verifyKB({
      verifier: (data: string, sig: string) => signatureVerifies(cnfKey, h.alg as string, data, sig),
      payload: out.decoded?.claims ?? {},
      nonce: p.nonce as string,
    });
  } catch {
    out.problems.push(problem("KB_JWT_SIGNATURE_INVALID", "the key-binding JWT is not signed by the key in cnf"));
  }
}

/**
 * Verifies a presented mandate SD-JWT (see the module comment). Every check runs that can, so
 * `problems` lists every reason found, first the most basic; empty means verified.
 */
export async function verifyMandatePresentation(text: unknown, opts: MandateVerifyOptions): Promise<MandateVerification> {
  const parsed = await parse(text);
  if ("code" in parsed) return { problems: [parsed] };
  const { sdjwt, withoutKb, kbText } = parsed;
  const out: MandateVerification = { problems: [], decoded: decodedOf(parsed) };
  await checkIssuer(parsed, opts.issuerKeys, out);
  out.problems.push(...parsed.resolution.problems, ...withheldConstraintProblems(parsed.resolution.undisclosed));
  const cnf = cnfKeyOf(out.decoded?.claims ?? {});
  if ("code" in cnf) out.problems.push(cnf);
  else out.cnfKey = cnf;
  await checkKeyBinding(sdjwt, withoutKb, kbText, out.cnfKey, opts, out);
  return out;
}
