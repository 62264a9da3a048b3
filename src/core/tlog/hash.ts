/**
 * RFC 6962 / RFC 9162 §2.1.1 hashing with SHA-256 and domain separation: a leaf is
 * SHA-256(0x00 || data), an interior node SHA-256(0x01 || left || right), and the empty tree's
 * root is SHA-256 of the empty string. Hashes are 32-byte Buffers.
 */
import { createHash } from "node:crypto";

/** Length in bytes of every tree hash. */
export const HASH_SIZE = 32;

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

/** RFC 6962 leaf hash: SHA-256(0x00 || data). */
export function leafHash(data: Uint8Array): Buffer {
  return createHash("sha256").update(LEAF_PREFIX).update(data).digest();
}

/** RFC 6962 interior node hash: SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash("sha256").update(NODE_PREFIX).update(left).update(right).digest();
}

/** Root of the empty tree: SHA-256(""). */
export const EMPTY_ROOT: Buffer = createHash("sha256").digest();

/** True when `h` is a byte array of exactly {@link HASH_SIZE} bytes. */
export function isTreeHash(h: unknown): h is Uint8Array {
  return h instanceof Uint8Array && h.length === HASH_SIZE;
}

/** Byte equality of two hashes (both public values; no constant-time need). */
export function hashEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}
