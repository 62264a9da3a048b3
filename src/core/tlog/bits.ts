/**
 * Index and size arithmetic for Merkle trees, exact for every safe integer (up to 2^53 - 1).
 *
 * JavaScript's bit operators (`>>`, `>>>`, `<<`, `&`) truncate to 32 bits, so nothing here
 * uses them: shifts are divisions by powers of two, bit tests are remainders. Every size and
 * index reaching the tree core is attacker-controlled and goes through {@link checkCount}
 * before use.
 */
import { malformed } from "./errors.js";

/** Throws PROOF_MALFORMED unless `n` is a safe integer with `0 <= n`. Returns `n`. */
export function checkCount(n: unknown, what: string): number {
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw malformed(`${what} must be a safe non-negative integer`);
  }
  return n;
}

/** `n >> 1` without 32-bit truncation. */
export function half(n: number): number {
  return Math.floor(n / 2);
}

/** True when the lowest bit of `n` is set. */
export function isOdd(n: number): boolean {
  return n % 2 === 1;
}

/** `n >> k` without 32-bit truncation. */
export function shiftRight(n: number, k: number): number {
  return Math.floor(n / 2 ** k);
}

/** Bit `k` of `n` (0 or 1). */
export function bitAt(n: number, k: number): number {
  return shiftRight(n, k) % 2;
}

/** Number of set bits of `n`. */
export function popCount(n: number): number {
  let c = 0;
  for (let x = n; x > 0; x = half(x)) c += x % 2;
  return c;
}

/** Number of bits needed to write `n` (0 for 0). */
export function bitLength(n: number): number {
  let len = 0;
  for (let x = n; x > 0; x = half(x)) len++;
  return len;
}

/** True when `n` is 2^k for some k >= 0. */
export function isPowerOfTwo(n: number): boolean {
  return n > 0 && popCount(n) === 1;
}

/** The largest power of two strictly below `n` (RFC 9162's `k`); requires `n > 1`. */
export function largestPowerOfTwoBelow(n: number): number {
  return 2 ** (bitLength(n - 1) - 1);
}
