import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  EMPTY_ROOT,
  ProofError,
  appendLeaves,
  consistencyPlan,
  consistencyProof,
  frontierNodes,
  inclusionPlan,
  inclusionProof,
  leafHash,
  nodeHash,
  nodeKey,
  rootAt,
  rootFromFrontier,
  rootPlan,
  verifyConsistency,
  verifyInclusion,
  type NodeId,
  type NodeReader,
} from "../../../../src/core/tlog/index.js";

// ---- naive RFC 9162 §2.1 reference, straight from the recursive definitions ----
function largestPow2Below(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}
function mth(d: Buffer[]): Buffer {
  if (d.length === 0) return EMPTY_ROOT;
  if (d.length === 1) return d[0] as Buffer;
  const k = largestPow2Below(d.length);
  return nodeHash(mth(d.slice(0, k)), mth(d.slice(k)));
}
function path(m: number, d: Buffer[]): Buffer[] {
  if (d.length <= 1) return [];
  const k = largestPow2Below(d.length);
  return m < k ? [...path(m, d.slice(0, k)), mth(d.slice(k))] : [...path(m - k, d.slice(k)), mth(d.slice(0, k))];
}
function subproof(m: number, d: Buffer[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const k = largestPow2Below(d.length);
  return m <= k ? [...subproof(m, d.slice(0, k), b), mth(d.slice(k))] : [...subproof(m - k, d.slice(k), false), mth(d.slice(0, k))];
}

// ---- one log of MAX leaves built by appendLeaves one leaf at a time; nodes kept in a Map ----
const MAX = 2100;
const LEAVES = Array.from({ length: MAX }, (_, i) => leafHash(Buffer.from(`entry ${i}`)));
const STORE = new Map<string, Buffer>();
const ROOTS: Buffer[] = [EMPTY_ROOT];
{
  let state = { size: 0, frontier: [] as Buffer[] };
  for (const leaf of LEAVES) {
    const r = appendLeaves(state.size, state.frontier, [leaf]);
    for (const x of r.nodes) STORE.set(nodeKey(x.level, x.index), x.hash);
    ROOTS.push(rootFromFrontier(r.size, r.frontier));
    state = r;
  }
}

/** A reader over STORE that records what it reads and refuses nodes outside `allowed`. */
function recordingReader(allowed: NodeId[]): { read: NodeReader; reads: string[] } {
  const ok = new Set(allowed.map((id) => nodeKey(id.level, id.index)));
  const reads: string[] = [];
  const read: NodeReader = (level, index) => {
    const key = nodeKey(level, index);
    reads.push(key);
    if (!ok.has(key)) throw new Error(`read of unplanned node ${key}`);
    const h = STORE.get(key);
    if (!h) throw new Error(`missing node ${key}`);
    return h;
  };
  return { read, reads };
}

/** Plan invariants: full subtrees inside a tree of `size`, each once, O(log n) of them. */
function checkPlan(plan: NodeId[], size: number): void {
  const keys = plan.map((id) => nodeKey(id.level, id.index));
  expect(new Set(keys).size).toBe(keys.length);
  expect(plan.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(size + 1)) + 1);
  for (const { level, index } of plan) {
    expect(Number.isSafeInteger(level) && level >= 0).toBe(true);
    expect(Number.isSafeInteger(index) && index >= 0).toBe(true);
    expect((index + 1) * 2 ** level).toBeLessThanOrEqual(size);
  }
}

const sizeAndIndex = fc.integer({ min: 1, max: MAX }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n - 1 })));
const sizePair = fc.integer({ min: 1, max: MAX }).chain((n) => fc.tuple(fc.integer({ min: 1, max: n }), fc.constant(n)));

describe("tree store", () => {
  it("has roots equal to the naive MTH of every prefix", () => {
    for (const n of [0, 1, 2, 3, 7, 8, 9, 255, 256, 1000, 1023, 1024, 1025, MAX]) {
      expect(ROOTS[n]?.equals(mth(LEAVES.slice(0, n)))).toBe(true);
    }
  });

  it("computes the root of any earlier size from the nodes of its plan only", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX }), (n) => {
        const plan = rootPlan(n);
        if (n > 0) checkPlan(plan, n);
        expect(plan).toEqual(frontierNodes(n));
        const { read, reads } = recordingReader(plan);
        expect(rootAt(n, read).equals(ROOTS[n] as Buffer)).toBe(true);
        expect(reads.length).toBe(plan.length);
      }),
      { numRuns: 150 },
    );
  });
});

describe("inclusion proofs", () => {
  it("equal the RFC 9162 PATH and verify against the root from the frontier", () => {
    fc.assert(
      fc.property(sizeAndIndex, ([n, m]) => {
        const plan = inclusionPlan(m, n);
        checkPlan(plan, n);
        const { read, reads } = recordingReader(plan);
        const proof = inclusionProof(m, n, read);
        expect(new Set(reads)).toEqual(new Set(plan.map((id) => nodeKey(id.level, id.index))));
        expect(reads.length).toBe(plan.length);
        const want = path(m, LEAVES.slice(0, n));
        expect(proof.map((h) => h.toString("hex"))).toEqual(want.map((h) => h.toString("hex")));
        expect(() => verifyInclusion(LEAVES[m] as Buffer, m, n, proof, ROOTS[n] as Buffer)).not.toThrow();
      }),
      { numRuns: 120 },
    );
  });

  it("covers the edges of small trees exhaustively", () => {
    for (let n = 1; n <= 33; n++) {
      for (let m = 0; m < n; m++) {
        const { read } = recordingReader(inclusionPlan(m, n));
        const proof = inclusionProof(m, n, read);
        verifyInclusion(LEAVES[m] as Buffer, m, n, proof, ROOTS[n] as Buffer);
        expect(proof).toEqual(path(m, LEAVES.slice(0, n)));
      }
    }
  });

  it("refuses indexes outside the tree", () => {
    for (const [m, n] of [
      [0, 0],
      [5, 5],
      [6, 5],
      [-1, 5],
      [0.5, 5],
      [0, 2 ** 53],
      [Number.NaN, 3],
    ] as const) {
      expect(() => inclusionPlan(m, n)).toThrow(ProofError);
    }
  });
});

describe("consistency proofs", () => {
  it("equal the RFC 9162 PROOF and verify between the two roots", () => {
    fc.assert(
      fc.property(sizePair, ([m, n]) => {
        const plan = consistencyPlan(m, n);
        checkPlan(plan, n);
        const { read, reads } = recordingReader(plan);
        const proof = consistencyProof(m, n, read);
        expect(reads.length).toBe(plan.length);
        const want = subproof(m, LEAVES.slice(0, n), true);
        expect(proof.map((h) => h.toString("hex"))).toEqual(want.map((h) => h.toString("hex")));
        expect(() => verifyConsistency(m, n, proof, ROOTS[m] as Buffer, ROOTS[n] as Buffer)).not.toThrow();
      }),
      { numRuns: 120 },
    );
  });

  it("covers small size pairs exhaustively", () => {
    for (let n = 1; n <= 33; n++) {
      for (let m = 1; m <= n; m++) {
        const { read } = recordingReader(consistencyPlan(m, n));
        const proof = consistencyProof(m, n, read);
        verifyConsistency(m, n, proof, ROOTS[m] as Buffer, ROOTS[n] as Buffer);
        expect(proof).toEqual(subproof(m, LEAVES.slice(0, n), true));
      }
    }
  });

  it("is empty between equal sizes and refuses an empty or larger first tree", () => {
    expect(consistencyPlan(9, 9)).toEqual([]);
    expect(consistencyProof(9, 9, () => Buffer.alloc(32))).toEqual([]);
    expect(() => consistencyPlan(0, 4)).toThrow(ProofError);
    expect(() => consistencyPlan(5, 4)).toThrow(ProofError);
    expect(() => consistencyPlan(1, 2 ** 53)).toThrow(ProofError);
  });
});

describe("proof assembly", () => {
  it("refuses a stored node that is not a 32-byte hash", () => {
    expect(() => inclusionProof(0, 2, () => Buffer.alloc(31))).toThrow(ProofError);
  });

  it("propagates a reader's missing-node error", () => {
    expect(() =>
      inclusionProof(3, 10, () => {
        throw new Error("missing");
      }),
    ).toThrow("missing");
  });
});

// ---- huge trees: all leaves equal, so a full subtree's hash depends only on its level ----
const UNIFORM: Buffer[] = [leafHash(Buffer.from("same"))];
for (let level = 1; level <= 53; level++) UNIFORM.push(nodeHash(UNIFORM[level - 1] as Buffer, UNIFORM[level - 1] as Buffer));
const uniformRead: NodeReader = (level) => UNIFORM[level] as Buffer;
const uniformRoot = (size: number): Buffer =>
  rootFromFrontier(
    size,
    frontierNodes(size).map((id) => UNIFORM[id.level] as Buffer),
  );
const bigSize = fc.oneof(fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }), fc.constant(Number.MAX_SAFE_INTEGER), fc.constant(2 ** 32 + 1));

describe("proofs in trees beyond 2^32 leaves", () => {
  it("plans and verifies inclusion with exact arithmetic", () => {
    fc.assert(
      fc.property(bigSize, fc.double({ min: 0, max: 1, noNaN: true }), (n, f) => {
        const m = Math.min(n - 1, Math.floor(f * n));
        checkPlan(inclusionPlan(m, n), n);
        const proof = inclusionProof(m, n, uniformRead);
        verifyInclusion(UNIFORM[0] as Buffer, m, n, proof, uniformRoot(n));
      }),
      { numRuns: 120 },
    );
  });

  it("plans and verifies consistency with exact arithmetic", () => {
    fc.assert(
      fc.property(bigSize, fc.double({ min: 0, max: 1, noNaN: true }), (n, f) => {
        const m = Math.max(1, Math.floor(f * n));
        checkPlan(consistencyPlan(m, n), n);
        const proof = consistencyProof(m, n, uniformRead);
        verifyConsistency(m, n, proof, uniformRoot(m), uniformRoot(n));
      }),
      { numRuns: 120 },
    );
  });
});
