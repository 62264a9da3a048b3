import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  EMPTY_ROOT,
  ProofError,
  appendLeaves,
  frontierNodes,
  leafHash,
  nodeHash,
  nodeKey,
  rootFromFrontier,
  type TreeNode,
} from "../../../../src/core/tlog/index.js";

/** Naive recursive RFC 6962 MTH over leaf hashes. */
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leaves[0] as Buffer;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

const leaves = (n: number, salt = 0): Buffer[] => Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`leaf ${salt}/${i}`)));

// RFC 6962 test tree (certificate-transparency / transparency-dev testdata): leaf inputs and
// the roots of the first 1..8 leaves.
const CT_LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"];
const CT_ROOTS = [
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

function expectMalformed(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ProofError);
    expect((e as ProofError).code).toBe("PROOF_MALFORMED");
    return;
  }
  throw new Error("expected PROOF_MALFORMED");
}

describe("appendLeaves", () => {
  it("reproduces the RFC 6962 reference roots for 1..8 leaves", () => {
    let state = { size: 0, frontier: [] as Buffer[] };
    CT_LEAVES.forEach((hex, i) => {
      const r = appendLeaves(state.size, state.frontier, [leafHash(Buffer.from(hex, "hex"))]);
      expect(r.root.toString("hex")).toBe(CT_ROOTS[i]);
      expect(rootFromFrontier(r.size, r.frontier).toString("hex")).toBe(CT_ROOTS[i]);
      state = r;
    });
  });

  it("has the empty tree's root at size 0", () => {
    expect(rootFromFrontier(0, []).equals(EMPTY_ROOT)).toBe(true);
    const r = appendLeaves(0, [], []);
    expect(r).toMatchObject({ size: 0, frontier: [], nodes: [] });
    expect(r.root.equals(EMPTY_ROOT)).toBe(true);
  });

  it("emits every full subtree exactly once, with the hash the naive MTH gives it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), (n) => {
        const ls = leaves(n);
        const { nodes, frontier, root, size } = appendLeaves(0, [], ls);
        expect(size).toBe(n);
        expect(root.equals(mth(ls))).toBe(true);
        const keys = new Set(nodes.map((x) => nodeKey(x.level, x.index)));
        expect(keys.size).toBe(nodes.length);
        let fullSubtrees = 0;
        for (let level = 0; 2 ** level <= n; level++) fullSubtrees += Math.floor(n / 2 ** level);
        expect(nodes.length).toBe(fullSubtrees);
        for (const x of nodes) {
          const lo = x.index * 2 ** x.level;
          expect(x.hash.equals(mth(ls.slice(lo, lo + 2 ** x.level)))).toBe(true);
        }
        // The frontier is the maximal full subtrees of the right edge, left to right.
        const ids = frontierNodes(n);
        expect(frontier.length).toBe(ids.length);
        const byKey = new Map(nodes.map((x) => [nodeKey(x.level, x.index), x.hash]));
        ids.forEach((id, i) => expect(byKey.get(nodeKey(id.level, id.index))?.equals(frontier[i] as Buffer)).toBe(true));
      }),
      { numRuns: 60 },
    );
  });

  it("gives the same nodes, frontier and root whatever the batch sizes", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2000 }), fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1 }), (n, batches) => {
        const ls = leaves(n, 7);
        const whole = appendLeaves(0, [], ls);
        let state = { size: 0, frontier: [] as Buffer[], root: EMPTY_ROOT };
        const nodes: TreeNode[] = [];
        let at = 0;
        for (let b = 0; at < n; b++) {
          const take = batches[b % batches.length] as number;
          const r = appendLeaves(state.size, state.frontier, ls.slice(at, at + take));
          nodes.push(...r.nodes);
          at = Math.min(n, at + take);
          expect(r.size).toBe(at);
          expect(r.root.equals(rootFromFrontier(r.size, r.frontier))).toBe(true);
          state = r;
        }
        expect(state.size).toBe(n);
        expect(state.root.equals(whole.root)).toBe(true);
        const show = (xs: TreeNode[]): string => xs.map((x) => `${nodeKey(x.level, x.index)}=${x.hash.toString("hex")}`).join(",");
        expect(Buffer.concat(state.frontier).equals(Buffer.concat(whole.frontier))).toBe(true);
        expect(show(nodes) === show(whole.nodes)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  it("does not modify its inputs", () => {
    const first = appendLeaves(0, [], leaves(5));
    const before = first.frontier.map((b) => Buffer.from(b));
    const more = leaves(3, 1);
    const moreBefore = more.map((b) => Buffer.from(b));
    appendLeaves(first.size, first.frontier, more);
    expect(first.frontier).toEqual(before);
    expect(more).toEqual(moreBefore);
  });

  it("rejects sizes, frontiers and leaves that are not well-formed", () => {
    const ok = appendLeaves(0, [], leaves(6));
    expectMalformed(() => appendLeaves(-1, [], []));
    expectMalformed(() => appendLeaves(1.5, [], []));
    expectMalformed(() => appendLeaves(2 ** 53, [], []));
    expectMalformed(() => appendLeaves(Number.NaN, [], []));
    expectMalformed(() => appendLeaves("6" as unknown as number, ok.frontier, []));
    expectMalformed(() => appendLeaves(6, ok.frontier.slice(1), []));
    expectMalformed(() => appendLeaves(6, [...ok.frontier, EMPTY_ROOT], []));
    expectMalformed(() => appendLeaves(6, [ok.frontier[0] as Buffer, Buffer.alloc(31)], []));
    expectMalformed(() => appendLeaves(6, ok.frontier, [Buffer.alloc(33)]));
    expectMalformed(() => appendLeaves(6, ok.frontier, "x" as unknown as Buffer[]));
    expectMalformed(() => appendLeaves(Number.MAX_SAFE_INTEGER, new Array(53).fill(EMPTY_ROOT) as Buffer[], [EMPTY_ROOT]));
    expectMalformed(() => rootFromFrontier(3, [EMPTY_ROOT]));
  });

  it("indexes nodes correctly beyond 2^32 leaves", () => {
    // A tree of 2^33 - 1 leaves: frontier of 33 subtrees; one more leaf completes them all.
    const size = 2 ** 33 - 1;
    const frontier = Array.from({ length: 33 }, (_, i) => leafHash(Buffer.from([i])));
    const r = appendLeaves(size, frontier, [leafHash(Buffer.from("last"))]);
    expect(r.size).toBe(2 ** 33);
    expect(r.frontier).toHaveLength(1);
    expect(r.nodes.map((x) => nodeKey(x.level, x.index))).toEqual(Array.from({ length: 34 }, (_, level) => nodeKey(level, Math.floor(size / 2 ** level))));
    expect(frontierNodes(2 ** 40 + 5)).toEqual([
      { level: 40, index: 0 },
      { level: 2, index: 2 ** 38 },
      { level: 0, index: 2 ** 40 + 4 },
    ]);
  });

  it("keys nodes as level:index", () => {
    expect(nodeKey(3, 17)).toBe("3:17");
  });
});
