/**
 * Proof verification exactly as RFC 9162 §2.1.3.2 (inclusion) and §2.1.4.2 (consistency):
 * left/right is derived from the index and sizes by bit arithmetic, never taken from the
 * proof, and a proof with missing or surplus hashes is rejected. Every number and hash is
 * attacker-controlled: sizes and indexes must be safe non-negative integers in range, proof
 * hashes 32 bytes. Failures throw ProofError: PROOF_MALFORMED for input that cannot be a
 * proof, PROOF_INVALID for a well-formed proof that does not lead to the given root(s).
 */
import { checkCount, half, isOdd, isPowerOfTwo } from "./bits.js";
import { invalid, malformed } from "./errors.js";
import { hashEqual, isTreeHash, nodeHash } from "./hash.js";

export { ProofError } from "./errors.js";

/** Side of each proof hash relative to the running hash (`left`: HASH(p || r)). */
export type ProofSide = "left" | "right";

/**
 * RFC 9162 §2.1.3.2 steps 1-4 and the `sn == 0` check of step 5, for a proof of `count`
 * hashes: the side of each hash. The steps depend only on index and size, so they run before
 * any hashing; they stop after at most 54 hashes, however long the proof.
 */
function inclusionSides(index: number, size: number, count: number): ProofSide[] {
  checkCount(index, "leaf index");
  checkCount(size, "tree size");
  if (index >= size) throw malformed("leaf index must be below the tree size");
  let fn = index;
  let sn = size - 1;
  const sides: ProofSide[] = [];
  for (let i = 0; i < count; i++) {
    if (sn === 0) throw malformed("inclusion proof has surplus hashes");
    if (isOdd(fn) || fn === sn) {
      sides.push("left");
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sides.push("right");
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) throw malformed("inclusion proof is missing hashes");
  return sides;
}

/**
 * RFC 9162 §2.1.4.2 steps 3-6 and the `sn == 0` check of step 7, for `count` proof hashes
 * after the seed: whether each hash extends both roots or only the second. Like the inclusion
 * steps they depend only on the sizes, so a wrong count is rejected before any hashing.
 */
function consistencySteps(size1: number, size2: number, count: number): Array<"both" | "second"> {
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  const steps: Array<"both" | "second"> = [];
  for (let i = 0; i < count; i++) {
    if (sn === 0) throw malformed("consistency proof has surplus hashes");
    if (isOdd(fn) || fn === sn) {
      steps.push("both");
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      steps.push("second");
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) throw malformed("consistency proof is missing hashes");
  return steps;
}

function checkProofArray(proof: unknown): Uint8Array[] {
  if (!Array.isArray(proof)) throw malformed("proof must be an array of hashes");
  return proof;
}

function checkProofHashes(proof: readonly unknown[]): void {
  proof.forEach((h, i) => {
    if (!isTreeHash(h)) throw malformed(`proof hash ${i} is not 32 bytes`);
  });
}

/** Left/right hint for each hash of an inclusion proof (the wire `side`); checks the count. */
export function proofSides(index: number, size: number, proof: Buffer[]): Array<"left" | "right"> {
  return inclusionSides(index, size, checkProofArray(proof).length);
}

/** The root an inclusion proof leads to from `leafHash` at `index` in a tree of `size`. */
export function rootFromInclusionProof(index: number, size: number, leafHash: Buffer, proof: Buffer[]): Buffer {
  const path = checkProofArray(proof);
  const sides = inclusionSides(index, size, path.length);
  if (!isTreeHash(leafHash)) throw malformed("leaf hash is not 32 bytes");
  checkProofHashes(path);
  let r: Buffer = Buffer.from(leafHash);
  path.forEach((p, i) => {
    r = sides[i] === "left" ? nodeHash(p, r) : nodeHash(r, p);
  });
  return r;
}

/** Verifies that `leafHash` is leaf `index` of the tree of `size` leaves with root `root`. */
export function verifyInclusion(leafHash: Buffer, index: number, size: number, proof: Buffer[], root: Buffer): void {
  if (!(root instanceof Uint8Array)) throw malformed("root must be bytes");
  const r = rootFromInclusionProof(index, size, leafHash, proof);
  if (!hashEqual(r, root)) throw invalid("inclusion proof does not lead to the root");
}

/**
 * Verifies that the tree of `size1` leaves with root `root1` is a prefix of the tree of
 * `size2` leaves with root `root2`. Equal sizes need an empty proof and equal roots. A first
 * size of 0 is rejected: every tree extends the empty tree, so such a proof proves nothing.
 */
export function verifyConsistency(size1: number, size2: number, proof: Buffer[], root1: Buffer, root2: Buffer): void {
  checkCount(size1, "first tree size");
  checkCount(size2, "second tree size");
  const path = checkProofArray(proof);
  if (!(root1 instanceof Uint8Array) || !(root2 instanceof Uint8Array)) throw malformed("roots must be bytes");
  if (size1 === 0) throw malformed("a consistency proof needs a first tree of at least one leaf");
  if (size1 > size2) throw malformed("first tree size must not exceed the second");
  if (size1 === size2) {
    if (path.length !== 0) throw malformed("trees of equal size need an empty consistency proof");
    if (!hashEqual(root1, root2)) throw invalid("trees of equal size have different roots");
    return;
  }
  // RFC 9162 §2.1.4.2 from here on; 0 < size1 < size2.
  if (path.length === 0) throw malformed("consistency proof is empty");
  const prepend = isPowerOfTwo(size1);
  const steps = consistencySteps(size1, size2, prepend ? path.length : path.length - 1);
  checkProofHashes(path);
  const seed = prepend ? root1 : (path[0] as Uint8Array);
  const rest = prepend ? path : path.slice(1);
  let fr: Buffer = Buffer.from(seed);
  let sr = fr;
  steps.forEach((step, i) => {
    const c = rest[i] as Uint8Array;
    if (step === "both") {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
    } else {
      sr = nodeHash(sr, c);
    }
  });
  if (!hashEqual(fr, root1)) throw invalid("consistency proof does not lead to the first root");
  if (!hashEqual(sr, root2)) throw invalid("consistency proof does not lead to the second root");
}
