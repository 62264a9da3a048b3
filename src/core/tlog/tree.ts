/**
 * The append side of the log's Merkle tree (RFC 6962 / RFC 9162 §2.1.1).
 *
 * Node `(level, index)` is the root of the full subtree over leaves
 * `[index * 2^level, (index + 1) * 2^level)`; level 0 holds the leaf hashes. The store keeps
 * every full-subtree node ever completed, plus the tree's frontier: the hashes of the maximal
 * full subtrees along the right edge, left to right (one per set bit of the size, largest
 * first). Appending reads only the frontier; it never needs an old node.
 */
import { bitAt, checkCount, popCount, shiftRight, bitLength } from "./bits.js";
import { malformed } from "./errors.js";
import { EMPTY_ROOT, isTreeHash, nodeHash } from "./hash.js";

/** Position of a full-subtree node. */
export interface NodeId {
  level: number;
  index: number;
}

/** A full-subtree node with its hash. */
export interface TreeNode extends NodeId {
  hash: Buffer;
}

/** Stable string key of a node, `"<level>:<index>"` (e.g. `"3:17"`). */
export function nodeKey(level: number, index: number): string {
  return `${level}:${index}`;
}

/**
 * The full-subtree nodes that make up the leaf range `[start, end)`, largest first: the
 * binary decomposition of `end - start`. `start` must be a multiple of the largest piece,
 * which holds for every range the RFC 6962 recursion produces; the root of the range is the
 * right fold of these nodes' hashes.
 */
export function rangeNodes(start: number, end: number): NodeId[] {
  const out: NodeId[] = [];
  const len = end - start;
  let at = start;
  for (let level = bitLength(len) - 1; level >= 0; level--) {
    if (bitAt(len, level) === 1) {
      out.push({ level, index: shiftRight(at, level) });
      at += 2 ** level;
    }
  }
  return out;
}

/** The frontier's node ids for a tree of `size` leaves (left to right). */
export function frontierNodes(size: number): NodeId[] {
  return rangeNodes(0, checkCount(size, "tree size"));
}

/** Right fold of subtree hashes into one root: h0 ∘ (h1 ∘ (... ∘ hk)). */
export function foldRight(hashes: readonly Uint8Array[]): Buffer {
  const last = hashes[hashes.length - 1];
  if (last === undefined) return Buffer.from(EMPTY_ROOT);
  let acc: Buffer = Buffer.from(last);
  for (let i = hashes.length - 2; i >= 0; i--) acc = nodeHash(hashes[i] as Uint8Array, acc);
  return acc;
}

function checkFrontier(size: number, frontier: unknown): Buffer[] {
  if (!Array.isArray(frontier) || frontier.length !== popCount(size)) {
    throw malformed(`frontier of a tree of ${size} leaves must hold ${popCount(size)} hashes`);
  }
  return frontier.map((h, i) => {
    if (!isTreeHash(h)) throw malformed(`frontier hash ${i} is not 32 bytes`);
    return Buffer.from(h);
  });
}

/** RFC 6962 root of a tree of `size` leaves from its frontier (EMPTY_ROOT for size 0). */
export function rootFromFrontier(size: number, frontier: Buffer[]): Buffer {
  checkCount(size, "tree size");
  return foldRight(checkFrontier(size, frontier));
}

/**
 * Appends leaf hashes to a tree of `size` leaves whose frontier is `frontier`. Returns the new
 * size, the new frontier, every full-subtree node completed on the way (each new leaf at
 * level 0 and every interior node it completes, in order of completion) and the new root.
 * Inputs are not modified. Throws PROOF_MALFORMED on a bad size, frontier or leaf hash.
 */
export function appendLeaves(size: number, frontier: Buffer[], leafHashes: Buffer[]): { size: number; frontier: Buffer[]; nodes: TreeNode[]; root: Buffer } {
  checkCount(size, "tree size");
  const stack = checkFrontier(size, frontier);
  if (!Array.isArray(leafHashes)) throw malformed("leaf hashes must be an array");
  if (leafHashes.length > Number.MAX_SAFE_INTEGER - size) throw malformed("tree size would exceed 2^53 - 1");
  const nodes: TreeNode[] = [];
  let n = size;
  for (const leaf of leafHashes) {
    if (!isTreeHash(leaf)) throw malformed(`leaf hash ${n} is not 32 bytes`);
    let carry: Buffer = Buffer.from(leaf);
    let level = 0;
    nodes.push({ level, index: n, hash: carry });
    // Each set low bit of n is a full subtree at the right edge that the new leaf completes.
    while (bitAt(n, level) === 1) {
      const left = stack.pop() as Buffer;
      carry = nodeHash(left, carry);
      level++;
      nodes.push({ level, index: shiftRight(n, level), hash: carry });
    }
    stack.push(carry);
    n++;
  }
  return { size: n, frontier: stack, nodes, root: foldRight(stack) };
}
