/**
 * C2SP transparency-log checkpoints (c2sp.org/tlog-checkpoint) as Ed25519 signed notes.
 *
 * Body: `<origin>\n<tree size in decimal, no leading zeros>\n<base64 RFC 6962 root>\n`. The
 * note's key name is the origin. Writ writes no extension lines; a verifier accepts
 * (and ignores) non-empty extension lines, which the spec allows.
 */
import type { PublicJwk, Signer } from "../jose/index.js";
import { checkCount } from "./bits.js";
import { invalid, malformed } from "./errors.js";
import { isTreeHash } from "./hash.js";
import { decodeStdBase64, isValidKeyName, noteKeyHash as keyHashOf, openNote, signNote } from "./note.js";

const SIZE_RE = /^(0|[1-9][0-9]*)$/;

/** True when `origin` can be a checkpoint origin (a note key name: non-empty, no spaces or +). */
export function isCheckpointOrigin(origin: unknown): origin is string {
  return isValidKeyName(origin);
}

function checkOrigin(origin: unknown): string {
  if (!isCheckpointOrigin(origin)) throw malformed("checkpoint origin must be non-empty without spaces or +");
  return origin;
}

/** Checkpoint note text: `"<origin>\n<size>\n<base64(root)>\n"`. */
export function checkpointBody(origin: string, size: number, root: Buffer): string {
  checkOrigin(origin);
  checkCount(size, "tree size");
  if (!isTreeHash(root)) throw malformed("tree root must be 32 bytes");
  return `${origin}\n${size}\n${Buffer.from(root).toString("base64")}\n`;
}

/** A signed checkpoint: the body, a blank line and `— <origin> base64(keyhash4 || sig)\n`. */
export function signCheckpoint(signer: Signer, origin: string, size: number, root: Buffer): string {
  return signNote(signer, origin, checkpointBody(origin, size, root));
}

/**
 * Verifies a checkpoint signed by `key` under key name `origin` and returns its tree size and
 * root. Throws ProofError: PROOF_MALFORMED when it does not parse, PROOF_INVALID when the
 * signature or the origin line does not match; JoseError when `key` is not Ed25519.
 */
export function verifyCheckpoint(note: string, origin: string, key: PublicJwk): { size: number; root: Buffer } {
  checkOrigin(origin);
  const text = openNote(note, origin, key);
  const lines = text.slice(0, -1).split("\n");
  const [first, sizeLine, rootLine, ...extensions] = lines;
  if (first === undefined || sizeLine === undefined || rootLine === undefined) {
    throw malformed("checkpoint needs origin, size and root lines");
  }
  if (extensions.some((l) => l === "")) throw malformed("checkpoint extension lines must be non-empty");
  if (first !== origin) throw invalid("checkpoint origin does not match");
  if (!SIZE_RE.test(sizeLine)) throw malformed("checkpoint size must be a decimal without leading zeros");
  const size = checkCount(Number(sizeLine), "checkpoint size");
  const root = decodeStdBase64(rootLine);
  if (root === undefined || root.length !== 32) throw malformed("checkpoint root must be 32 bytes of base64");
  return { size, root };
}

/** Note key ID of the log key: SHA-256(origin || 0x0A || 0x01 || 32-byte public key)[:4]. */
export function noteKeyHash(origin: string, key: PublicJwk): Buffer {
  return keyHashOf(origin, key);
}
