/**
 * C2SP signed notes (c2sp.org/signed-note) with Ed25519 signatures (signature type 0x01), as
 * golang.org/x/mod/sumdb/note writes and reads them.
 *
 * Format: the note text (ending in a newline), a blank line, then one or more signature lines
 * `— <key name> <base64(key ID || signature)>\n` (U+2014 EM DASH, space, name, space, standard
 * padded base64). The key ID is the first 4 bytes of SHA-256(name || 0x0A || 0x01 || 32-byte
 * public key), big-endian; the signature is Ed25519 over the UTF-8 note text, final newline
 * included. Notes must be well-formed UTF-8 with no control characters other than newline.
 * Opening a note verifies the signature lines whose name and key ID match the trusted key and
 * ignores the others; it fails unless one matches and every matching one verifies.
 */
import { createHash, sign } from "node:crypto";
import { JoseError, verifySignatureBytes, type PublicJwk, type Signer } from "../jose/index.js";
import { invalid, malformed } from "./errors.js";

/** Signature type byte of Ed25519 note signatures. */
const ED25519_TYPE = 0x01;
/** Prefix of every signature line: U+2014 EM DASH and a space. */
const SIG_PREFIX = "\u2014 ";
/** More signature lines than this make a note malformed (sumdb/note's limit). */
const MAX_SIGNATURES = 100;

const LONE_SURROGATE_RE = /\p{Cs}/u;
const SPACE_RE = /[\s\u0085]/u;
const B64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** True when `s` holds an ASCII control character other than newline. */
function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 && c !== 0x0a) return true;
  }
  return false;
}

/** True when `name` can name a note key: non-empty, no Unicode spaces, no `+`. */
export function isValidKeyName(name: unknown): name is string {
  return typeof name === "string" && name.length > 0 && !SPACE_RE.test(name) && !name.includes("+") && !hasControlChar(name) && !LONE_SURROGATE_RE.test(name);
}

/** Standard padded base64 (RFC 4648 §4), refusing every non-canonical spelling. */
export function decodeStdBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !B64_RE.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64");
  return bytes.toString("base64") === text ? bytes : undefined;
}

/** The raw 32-byte Ed25519 public key of a JWK; JoseError JWK_UNSUPPORTED for other keys. */
function ed25519Raw(key: PublicJwk): Buffer {
  if (key.kty !== "OKP" || key.crv !== "Ed25519") {
    throw new JoseError("JWK_UNSUPPORTED", "signed notes use Ed25519 keys");
  }
  const raw = Buffer.from(key.x, "base64url");
  if (raw.length !== 32) throw new JoseError("JWK_INVALID", "Ed25519 public key must be 32 bytes");
  return raw;
}

/** Note key ID: SHA-256(name || 0x0A || 0x01 || 32-byte Ed25519 public key)[:4]. */
export function noteKeyHash(name: string, key: PublicJwk): Buffer {
  const digest = createHash("sha256")
    .update(Buffer.from(name, "utf8"))
    .update(Buffer.from([0x0a, ED25519_TYPE]))
    .update(ed25519Raw(key))
    .digest();
  return digest.subarray(0, 4);
}

/**
 * The verifier key of `key` under key name `name`, in golang.org/x/mod/sumdb/note's text form
 * (`note.NewVerifier` reads it): `<name>+<key ID as 8 lowercase hex digits>+<standard padded
 * base64 of 0x01 || 32-byte Ed25519 public key>`.
 */
export function noteVerifierKey(name: string, key: PublicJwk): string {
  if (!isValidKeyName(name)) throw malformed("note key name must be non-empty without spaces or +");
  const data = Buffer.concat([Buffer.from([ED25519_TYPE]), ed25519Raw(key)]);
  return `${name}+${noteKeyHash(name, key).toString("hex")}+${data.toString("base64")}`;
}

/**
 * Reads a verifier key (the form of `noteVerifierKey`): its name and Ed25519 public key.
 * Throws PROOF_MALFORMED when it does not parse, is not Ed25519, or its key ID does not match.
 */
export function parseNoteVerifierKey(text: string): { name: string; key: PublicJwk } {
  // Only the first two "+" separate: standard base64 may hold "+" itself (as Go's strings.Cut reads it).
  const m = typeof text === "string" ? /^([^+]*)\+([^+]*)\+(.*)$/s.exec(text) : null;
  const [, name, hash, b64] = m ?? [];
  if (!m || name === undefined || hash === undefined || b64 === undefined || !isValidKeyName(name) || !/^[0-9a-f]{8}$/.test(hash)) {
    throw malformed("verifier key must be <name>+<8 hex digits>+<base64 key>");
  }
  const data = decodeStdBase64(b64);
  if (data === undefined || data.length !== 33 || data[0] !== ED25519_TYPE) throw malformed("verifier key must hold an Ed25519 key (type 0x01, 32 bytes)");
  const key: PublicJwk = { kty: "OKP", crv: "Ed25519", x: data.subarray(1).toString("base64url") };
  if (noteKeyHash(name, key).toString("hex") !== hash) throw malformed("verifier key ID does not match its name and key");
  return { name, key };
}

function checkNoteText(text: string): void {
  if (hasControlChar(text)) throw malformed("note contains a control character");
  if (LONE_SURROGATE_RE.test(text)) throw malformed("note is not well-formed UTF-8");
}

/**
 * Signs `text` (which must end in a newline) as a note under key name `name` and returns the
 * whole note: text, blank line, one signature line. Ed25519 signers only.
 */
export function signNote(signer: Signer, name: string, text: string): string {
  if (!isValidKeyName(name)) throw malformed("note key name must be non-empty without spaces or +");
  if (typeof text !== "string" || !text.endsWith("\n")) throw malformed("note text must end with a newline");
  checkNoteText(text);
  if (signer.alg !== "EdDSA") throw new JoseError("JWK_UNSUPPORTED", "signed notes use Ed25519 keys");
  const sig = sign(null, Buffer.from(text, "utf8"), signer.privateKey);
  const line = Buffer.concat([noteKeyHash(name, signer.publicJwk), sig]).toString("base64");
  return `${text}\n${SIG_PREFIX}${name} ${line}\n`;
}

/**
 * Opens a signed note trusting one Ed25519 key under key name `name`; returns the note text
 * (final newline included). Throws PROOF_MALFORMED when the note does not parse and
 * PROOF_INVALID when no signature line is from the key or one from the key does not verify.
 */
export function openNote(note: string, name: string, key: PublicJwk): string {
  if (typeof note !== "string") throw malformed("note must be a string");
  checkNoteText(note);
  const split = note.lastIndexOf("\n\n");
  if (split < 0) throw malformed("note has no signature block");
  const text = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (block.length === 0 || !block.endsWith("\n")) throw malformed("note signature block must end with a newline");
  const lines = block.slice(0, -1).split("\n");
  if (lines.length > MAX_SIGNATURES) throw malformed("note has too many signatures");
  const keyHash = noteKeyHash(name, key);
  const data = Buffer.from(text, "utf8");
  let verified = false;
  for (const line of lines) {
    if (!line.startsWith(SIG_PREFIX)) throw malformed("note signature line must start with an em dash and a space");
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(" ");
    const lineName = space < 0 ? rest : rest.slice(0, space);
    const b64 = space < 0 ? "" : rest.slice(space + 1);
    const raw = b64 === "" ? undefined : decodeStdBase64(b64);
    if (!isValidKeyName(lineName) || raw === undefined || raw.length < 5) throw malformed("note signature line is malformed");
    if (lineName !== name || !raw.subarray(0, 4).equals(keyHash)) continue; // someone else's signature
    // The one signature primitive (src/core/jose): weak keys and non-canonical S are refused there.
    const ok = raw.length === 68 && verifySignatureBytes(key, "EdDSA", data, raw.subarray(4));
    if (!ok) throw invalid(`note signature by ${name} does not verify`);
    verified = true;
  }
  if (!verified) throw invalid(`note carries no signature by ${name}`);
  return text;
}
