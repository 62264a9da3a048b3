/**
 * Proof generation (RFC 9162 §2.1.3.1 inclusion paths, §2.1.4.1 consistency proofs) from the
 * stored full-subtree nodes.
 *
 * Each proof hash is the root of a leaf range: a full subtree (one stored node) or, at most
 * once per proof, a ragged right-edge range whose root is the right fold of a few full
 * subtrees. A "plan" lists every node a proof needs (each once, O(log n) of them, all inside
 * the tree) so a store can fetch them in one query; the proof functions then read exactly
 * those nodes through the caller's `NodeReader`.
 */
import { checkCount, largestPowerOfTwoBelow } from "./bits.js";
import { malformed } from "./errors.js";
import { isTreeHash } from "./hash.js";
import { foldRight, frontierNodes, nodeKey, rangeNodes, type NodeId } from "./tree.js";

/** Returns the stored hash of full-subtree node `(level, index)`; throws if it is missing. */
export type NodeReader = (level: number, index: number) => Buffer;

/** A proof as a list of leaf ranges, each given by the full-subtree nodes that compose it. */
type RangePlan = NodeId[][];

/** RFC 9162 PATH(m, D[n]) as leaf ranges, leaf sibling first. */
function inclusionRanges(index: number, size: number): RangePlan {
  checkCount(index, "leaf index");
  checkCount(size, "tree size");
  if (index >= size) throw malformed("leaf index must be below the tree size");
  const topDown: RangePlan = [];
  let m = index;
  let start = 0;
  let n = size;
  while (n > 1) {
    const k = largestPowerOfTwoBelow(n);
    if (m < k) {
      topDown.push(rangeNodes(start + k, start + n));
      n = k;
    } else {
      topDown.push(rangeNodes(start, start + k));
      m -= k;
      start += k;
      n -= k;
    }
  }
  return topDown.reverse();
}

/** RFC 9162 PROOF(m, D[n]) as leaf ranges, deepest first; requires 1 <= size1 <= size2. */
function consistencyRanges(size1: number, size2: number): RangePlan {
  checkCount(size1, "first tree size");
  checkCount(size2, "second tree size");
  if (size1 < 1) throw malformed("a consistency proof needs a first tree of at least one leaf");
  if (size1 > size2) throw malformed("first tree size must not exceed the second");
  const topDown: RangePlan = [];
  let m = size1;
  let start = 0;
  let n = size2;
  let whole = true; // SUBPROOF's flag b: still on the path of the complete first tree
  while (m !== n) {
    const k = largestPowerOfTwoBelow(n);
    if (m <= k) {
      topDown.push(rangeNodes(start + k, start + n));
      n = k;
    } else {
      topDown.push(rangeNodes(start, start + k));
      m -= k;
      start += k;
      n -= k;
      whole = false;
    }
  }
  if (!whole) topDown.push(rangeNodes(start, start + n));
  return topDown.reverse();
}

function flatten(plan: RangePlan): NodeId[] {
  return plan.flat();
}

function readNode(read: NodeReader, id: NodeId): Buffer {
  const h = read(id.level, id.index);
  if (!isTreeHash(h)) throw malformed(`stored node ${nodeKey(id.level, id.index)} is not a 32-byte hash`);
  return Buffer.from(h);
}

function assemble(plan: RangePlan, read: NodeReader): Buffer[] {
  return plan.map((ids) => foldRight(ids.map((id) => readNode(read, id))));
}

/** Full-subtree nodes needed for the inclusion proof of leaf `index` in a tree of `size`. */
export function inclusionPlan(index: number, size: number): NodeId[] {
  return flatten(inclusionRanges(index, size));
}

/** RFC 9162 inclusion path of leaf `index` in the tree of the first `size` leaves. */
export function inclusionProof(index: number, size: number, read: NodeReader): Buffer[] {
  return assemble(inclusionRanges(index, size), read);
}

/** Full-subtree nodes needed for the consistency proof from `size1` to `size2` leaves. */
export function consistencyPlan(size1: number, size2: number): NodeId[] {
  return flatten(consistencyRanges(size1, size2));
}

/** RFC 9162 consistency proof between the trees of the first `size1` and `size2` leaves. */
export function consistencyProof(size1: number, size2: number, read: NodeReader): Buffer[] {
  return assemble(consistencyRanges(size1, size2), read);
}

/** Full-subtree nodes needed for the root of the first `size` leaves (that tree's frontier). */
export function rootPlan(size: number): NodeId[] {
  return frontierNodes(size);
}

/** RFC 6962 root of the first `size` leaves (EMPTY_ROOT for 0), from stored nodes. */
export function rootAt(size: number, read: NodeReader): Buffer {
  return foldRight(rootPlan(size).map((id) => readNode(read, id)));
}
