/**
 * An in-memory RFC 6962 tree for tests: every full-subtree node computed from the leaves, read
 * by the core's proof functions (`rootAt`, `inclusionProof`, `consistencyProof`).
 */
import { leafHash, nodeHash, type NodeReader } from "../../../../src/core/tlog/index.js";

/** The node reader of a tree over `leafData` (each leaf's bytes). */
export function memoryTree(leafData: readonly Uint8Array[]): NodeReader {
  const levels: Buffer[][] = [leafData.map((d) => leafHash(d))];
  for (let l = 0; (levels[l]?.length ?? 0) > 1; l++) {
    const below = levels[l] as Buffer[];
    const up: Buffer[] = [];
    for (let i = 0; i + 1 < below.length; i += 2) up.push(nodeHash(below[i] as Buffer, below[i + 1] as Buffer));
    levels.push(up);
  }
  return (level, index) => {
    const h = levels[level]?.[index];
    if (!h) throw new Error(`no node ${level}/${index}`);
    return h;
  };
}
