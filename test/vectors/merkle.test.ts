// RFC 6962 / RFC 9162 proof vectors (transparency-dev/merkle testdata, Apache-2.0; see
// merkle/LICENSE and SOURCES.md): every happy path verifies and every `wantErr` case is
// rejected with a ProofError by the verifiers of src/core/tlog.
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ProofError,
  proofSides,
  rootFromInclusionProof,
  verifyConsistency,
  verifyInclusion,
} from "../../src/core/tlog/index.js";

const dir = join(import.meta.dirname, "merkle");

function jsonFiles(root: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, e.name);
    if (e.isDirectory()) out.push(...jsonFiles(path));
    else if (e.isFile() && e.name.endsWith(".json")) out.push(path);
  }
  return out.sort();
}

function b64(s: string | null | undefined): Buffer {
  return Buffer.from(s ?? "", "base64");
}

function proofOf(p: string[] | null | undefined): Buffer[] {
  return (p ?? []).map(b64);
}

interface InclusionCase {
  leafIdx: number;
  treeSize: number;
  root: string | null;
  leafHash: string | null;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}

interface ConsistencyCase {
  size1: number;
  size2: number;
  root1: string | null;
  root2: string | null;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}

function load<T>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

function expectProofError(fn: () => void): void {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(ProofError);
}

const inclusion = jsonFiles(join(dir, "inclusion"));
const consistency = jsonFiles(join(dir, "consistency"));

describe("merkle inclusion vectors", () => {
  it("reads every vector file", () => {
    expect(inclusion.length).toBe(98);
    const cases = inclusion.map((f) => load<InclusionCase>(f));
    expect(cases.filter((c) => !c.wantErr).length).toBe(6);
  });
  for (const file of inclusion) {
    const c = load<InclusionCase>(file);
    const name = `${relative(dir, file)}: ${c.desc}`;
    if (c.wantErr) {
      it(`rejects ${name}`, () => {
        expectProofError(() => verifyInclusion(b64(c.leafHash), c.leafIdx, c.treeSize, proofOf(c.proof), b64(c.root)));
      });
    } else {
      it(`verifies ${name}`, () => {
        const proof = proofOf(c.proof);
        expect(() => verifyInclusion(b64(c.leafHash), c.leafIdx, c.treeSize, proof, b64(c.root))).not.toThrow();
        expect(rootFromInclusionProof(c.leafIdx, c.treeSize, b64(c.leafHash), proof).equals(b64(c.root))).toBe(true);
        expect(proofSides(c.leafIdx, c.treeSize, proof)).toHaveLength(proof.length);
      });
    }
  }
});

describe("merkle consistency vectors", () => {
  it("reads every vector file", () => {
    expect(consistency.length).toBe(98);
    const cases = consistency.map((f) => load<ConsistencyCase>(f));
    expect(cases.filter((c) => !c.wantErr).length).toBe(6);
  });
  for (const file of consistency) {
    const c = load<ConsistencyCase>(file);
    const name = `${relative(dir, file)}: ${c.desc}`;
    if (c.wantErr) {
      it(`rejects ${name}`, () => {
        expectProofError(() => verifyConsistency(c.size1, c.size2, proofOf(c.proof), b64(c.root1), b64(c.root2)));
      });
    } else {
      it(`verifies ${name}`, () => {
        expect(() => verifyConsistency(c.size1, c.size2, proofOf(c.proof), b64(c.root1), b64(c.root2))).not.toThrow();
      });
    }
  }
});
