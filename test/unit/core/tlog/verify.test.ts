import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ProofError,
  appendLeaves,
  consistencyProof,
  inclusionProof,
  leafHash,
  nodeKey,
  proofSides,
  rootFromFrontier,
  rootFromInclusionProof,
  verifyConsistency,
  verifyInclusion,
  type NodeReader,
} from "../../../../src/core/tlog/index.js";

const MAX = 600;
const LEAVES = Array.from({ length: MAX }, (_, i) => leafHash(Buffer.from(`v ${i}`)));
const STORE = new Map<string, Buffer>();
const ROOTS: Buffer[] = [];
{
  let state = appendLeaves(0, [], []);
  ROOTS.push(state.root);
  for (const leaf of LEAVES) {
    state = appendLeaves(state.size, state.frontier, [leaf]);
    for (const x of state.nodes) STORE.set(nodeKey(x.level, x.index), x.hash);
    ROOTS.push(rootFromFrontier(state.size, state.frontier));
  }
}
const read: NodeReader = (level, index) => STORE.get(nodeKey(level, index)) as Buffer;

function rejection(fn: () => void): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ProofError);
    return (e as ProofError).code;
  }
  throw new Error("expected a ProofError");
}

/** Every mutation of a proof that must not verify: flipped bytes, swaps, drops, additions. */
function mutations(proof: Buffer[], extra: Buffer): Array<[string, Buffer[]]> {
  const out: Array<[string, Buffer[]]> = [];
  proof.forEach((h, i) => {
    for (const byte of [0, 17, 31]) {
      const flipped = Buffer.from(h);
      flipped[byte] = (flipped[byte] as number) ^ 0x01;
      out.push([`flip ${i}/${byte}`, proof.map((p, j) => (j === i ? flipped : p))]);
    }
    out.push([`drop ${i}`, proof.filter((_, j) => j !== i)]);
    if (i + 1 < proof.length && !h.equals(proof[i + 1] as Buffer)) {
      const swapped = [...proof];
      swapped[i] = proof[i + 1] as Buffer;
      swapped[i + 1] = h;
      out.push([`swap ${i}`, swapped]);
    }
    out.push([`short ${i}`, proof.map((p, j) => (j === i ? p.subarray(0, 31) : p))]);
  });
  out.push(["append", [...proof, extra]], ["prepend", [extra, ...proof]]);
  if (proof.length > 0) out.push(["duplicate last", [...proof, ...proof.slice(-1)]]);
  return out;
}

const sizeAndIndex = fc.integer({ min: 1, max: MAX }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n - 1 })));
const sizePair = fc.integer({ min: 2, max: MAX }).chain((n) => fc.tuple(fc.integer({ min: 1, max: n - 1 }), fc.constant(n)));

describe("verifyInclusion", () => {
  it("rejects every flipped, swapped, missing, surplus or truncated proof hash", () => {
    fc.assert(
      fc.property(sizeAndIndex, ([n, m]) => {
        const proof = inclusionProof(m, n, read);
        const leaf = LEAVES[m] as Buffer;
        const root = ROOTS[n] as Buffer;
        verifyInclusion(leaf, m, n, proof, root);
        for (const [, bad] of mutations(proof, LEAVES[0] as Buffer)) rejection(() => verifyInclusion(leaf, m, n, bad, root));
        // Wrong leaf, index, size or root.
        expect(rejection(() => verifyInclusion(LEAVES[(m + 1) % MAX] as Buffer, m, n, proof, root))).toBe("PROOF_INVALID");
        if (n > 1) rejection(() => verifyInclusion(leaf, m ^ 1, n, proof, root));
        if (n < MAX) rejection(() => verifyInclusion(leaf, m, n + 1, proof, ROOTS[n + 1] as Buffer));
        rejection(() => verifyInclusion(leaf, m, n, proof, ROOTS[n - 1] as Buffer));
      }),
      { numRuns: 100 },
    );
  });

  it("classifies failures: wrong count is malformed, wrong hash is invalid", () => {
    const proof = inclusionProof(5, 11, read);
    const root = ROOTS[11] as Buffer;
    const leaf = LEAVES[5] as Buffer;
    expect(rejection(() => verifyInclusion(leaf, 5, 11, proof.slice(1), root))).toBe("PROOF_MALFORMED");
    expect(rejection(() => verifyInclusion(leaf, 5, 11, [...proof, leaf], root))).toBe("PROOF_MALFORMED");
    expect(rejection(() => verifyInclusion(leaf, 5, 11, [Buffer.alloc(32), ...proof.slice(1)], root))).toBe("PROOF_INVALID");
    expect(rejection(() => verifyInclusion(Buffer.alloc(31), 5, 11, proof, root))).toBe("PROOF_MALFORMED");
    expect(rejection(() => verifyInclusion(leaf, 5, 11, [Buffer.alloc(0), ...proof.slice(1)], root))).toBe("PROOF_MALFORMED");
  });

  it("refuses attacker numbers before use", () => {
    const leaf = LEAVES[0] as Buffer;
    const root = ROOTS[1] as Buffer;
    for (const [m, n] of [
      [-1, 1],
      [0, 0],
      [1, 1],
      [0.5, 1],
      [0, 1.5],
      [2 ** 53, 2 ** 53 + 2],
      [Number("18446744073709551615"), 1], // 2^64 - 1 as JSON.parse reads it
      [Number.NaN, 1],
      [0, Number.POSITIVE_INFINITY],
      ["0", 1],
    ] as Array<[number, number]>) {
      expect(rejection(() => verifyInclusion(leaf, m, n, [], root))).toBe("PROOF_MALFORMED");
    }
    expect(rejection(() => verifyInclusion(leaf, 0, 1, null as unknown as Buffer[], root))).toBe("PROOF_MALFORMED");
    expect(rejection(() => verifyInclusion(leaf, 0, 1, [], "x" as unknown as Buffer))).toBe("PROOF_MALFORMED");
  });

  it("stops reading an oversized proof early", () => {
    const huge = new Array<Buffer>(1_000_000).fill(LEAVES[0] as Buffer);
    expect(rejection(() => verifyInclusion(LEAVES[0] as Buffer, 0, 5, huge, ROOTS[5] as Buffer))).toBe("PROOF_MALFORMED");
  });

  it("returns the computed root", () => {
    const proof = inclusionProof(7, 20, read);
    expect(rootFromInclusionProof(7, 20, LEAVES[7] as Buffer, proof).equals(ROOTS[20] as Buffer)).toBe(true);
  });
});

/** RFC 9162 §2.1.3.2 side computation with BigInt (exact shifts), the reference for proofSides. */
function referenceSides(index: bigint, size: bigint): Array<"left" | "right"> | undefined {
  let fn = index;
  let sn = size - 1n;
  const out: Array<"left" | "right"> = [];
  while (sn !== 0n) {
    if ((fn & 1n) === 1n || fn === sn) {
      out.push("left");
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      out.push("right");
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return out;
}

describe("proofSides", () => {
  it("matches a BigInt reference of RFC 9162 for indexes and sizes up to 2^53 - 1", () => {
    const big = fc
      .integer({ min: 1, max: Number.MAX_SAFE_INTEGER })
      .chain((n) => fc.tuple(fc.constant(n), fc.oneof(fc.integer({ min: 0, max: n - 1 }), fc.constant(n - 1), fc.constant(0))));
    fc.assert(
      fc.property(big, ([n, m]) => {
        const want = referenceSides(BigInt(m), BigInt(n)) as Array<"left" | "right">;
        const dummy = new Array<Buffer>(want.length).fill(Buffer.alloc(32));
        expect(proofSides(m, n, dummy)).toEqual(want);
        expect(() => proofSides(m, n, [...dummy, Buffer.alloc(32)])).toThrow(ProofError);
        if (want.length > 0) expect(() => proofSides(m, n, dummy.slice(1))).toThrow(ProofError);
      }),
      { numRuns: 200 },
    );
  });

  it("names the side each sibling sits on", () => {
    // Leaf 2 of 3: its sibling is the left subtree [0, 2).
    expect(proofSides(2, 3, [Buffer.alloc(32)])).toEqual(["left"]);
    // Leaf 0 of 8: siblings 1, [2,4), [4,8) all on the right.
    expect(proofSides(0, 8, inclusionProof(0, 8, read))).toEqual(["right", "right", "right"]);
    expect(proofSides(5, 8, inclusionProof(5, 8, read))).toEqual(["left", "right", "left"]);
  });
});

describe("verifyConsistency", () => {
  it("rejects every flipped, swapped, missing or surplus proof hash and wrong roots", () => {
    fc.assert(
      fc.property(sizePair, ([m, n]) => {
        const proof = consistencyProof(m, n, read);
        const r1 = ROOTS[m] as Buffer;
        const r2 = ROOTS[n] as Buffer;
        verifyConsistency(m, n, proof, r1, r2);
        for (const [, bad] of mutations(proof, LEAVES[0] as Buffer)) rejection(() => verifyConsistency(m, n, bad, r1, r2));
        expect(rejection(() => verifyConsistency(m, n, proof, r2, r1))).toBe("PROOF_INVALID");
        expect(rejection(() => verifyConsistency(m, n, proof, r1, ROOTS[n - 1] as Buffer))).toBe("PROOF_INVALID");
        rejection(() => verifyConsistency(m, n, proof, ROOTS[m - 1] as Buffer, r2));
        rejection(() => verifyConsistency(m + 1, n, proof, ROOTS[m + 1] as Buffer, r2));
        rejection(() => verifyConsistency(m, n - 1, proof, r1, ROOTS[n - 1] as Buffer));
      }),
      { numRuns: 100 },
    );
  });

  it("handles equal sizes, an empty first tree and reversed sizes", () => {
    const r = ROOTS[4] as Buffer;
    expect(() => verifyConsistency(4, 4, [], r, r)).not.toThrow();
    expect(rejection(() => verifyConsistency(4, 4, [], r, ROOTS[5] as Buffer))).toBe("PROOF_INVALID");
    expect(rejection(() => verifyConsistency(4, 4, [r], r, r))).toBe("PROOF_MALFORMED");
    expect(rejection(() => verifyConsistency(0, 4, [], ROOTS[0] as Buffer, r))).toBe("PROOF_MALFORMED");
    expect(rejection(() => verifyConsistency(0, 0, [], ROOTS[0] as Buffer, ROOTS[0] as Buffer))).toBe("PROOF_MALFORMED");
    expect(rejection(() => verifyConsistency(5, 4, [], ROOTS[5] as Buffer, r))).toBe("PROOF_MALFORMED");
    expect(rejection(() => verifyConsistency(3, 4, [], ROOTS[3] as Buffer, r))).toBe("PROOF_MALFORMED");
    expect(rejection(() => verifyConsistency(-3, 4, [], r, r))).toBe("PROOF_MALFORMED");
    expect(rejection(() => verifyConsistency(3, 2 ** 53, [r], r, r))).toBe("PROOF_MALFORMED");
  });
});
