/**
 * A transparency log in memory for CLI tests, built with the core exactly as the server builds
 * it: chained entries, an RFC 6962 tree over their canonical bytes, heads signed by a log key,
 * inclusion and consistency proofs in the API's wire shapes, the key list, and proof bundles.
 */
import { canonicalBytes, hashFromBytes } from "../../../../src/core/canonical/index.js";
import { generateSigner, type Signer } from "../../../../src/core/jose/index.js";
import {
  buildLogEntry,
  consistencyProof,
  inclusionProof,
  logLeafHash,
  proofSides,
  rootAt,
  signTreeHead,
  type LogEntry,
  type TreeHead,
} from "../../../../src/core/tlog/index.js";
import type { LogBundle } from "../../../../src/cli/log/bundle-format.js";
import { memoryTree } from "./memory-tree.js";

/** The key list entry of a signer, as `/.well-known/svc-keys.json` publishes it. */
export function keyListOf(...signers: Signer[]): { keys: Array<{ public_key: Record<string, string> }> } {
  return { keys: signers.map((s) => ({ public_key: { ...(s.publicJwk as unknown as Record<string, string>), kid: s.kid } })) };
}

/** An in-memory log. */
export class FakeLog {
  readonly entries: LogEntry[] = [];
  constructor(
    readonly signer: Signer = generateSigner("EdDSA"),
    count = 0,
  ) {
    this.append(count);
  }

  /** Appends `n` incident entries (bodies name `history`, so two histories differ). */
  append(n: number, history = "main"): void {
    for (let i = 0; i < n; i++) {
      const sequence = this.entries.length + 1;
      this.entries.push(buildLogEntry("incident", sequence, { note: `entry ${sequence}`, n: sequence, history }, this.entries.at(-1)?.entry_hash));
    }
  }

  private reader(size: number) {
    return memoryTree(this.entries.slice(0, size).map((e) => canonicalBytes(e)));
  }

  /** The root of the first `size` entries. */
  root(size = this.entries.length): Buffer {
    return rootAt(size, this.reader(size));
  }

  /** The signed head of the first `size` entries. */
  head(size = this.entries.length, at = "2026-03-01T10:00:00Z", signer = this.signer): Promise<TreeHead> {
    return signTreeHead(signer, size, this.root(size), at);
  }

  /** The inclusion proof answer of entry `sequence` in the tree of `size`. */
  proof(sequence: number, size = this.entries.length): Record<string, unknown> {
    const hashes = inclusionProof(sequence - 1, size, this.reader(size));
    const sides = proofSides(sequence - 1, size, hashes);
    const entry = this.entries[sequence - 1] as LogEntry;
    return {
      sequence,
      index: sequence - 1,
      leaf: hashFromBytes(logLeafHash(entry)),
      proof: hashes.map((h, i) => ({ hash: hashFromBytes(h), side: sides[i] })),
      root: hashFromBytes(this.root(size)),
      tree_size: size,
    };
  }

  /** The consistency proof answer between two sizes. */
  consistency(first: number, second: number): { first: number; second: number; proof: string[] } {
    return { first, second, proof: consistencyProof(first, second, this.reader(second)).map(hashFromBytes) };
  }

  /** The proof bundle of entry `sequence` against the head of the whole log. */
  async bundle(sequence: number): Promise<LogBundle> {
    return {
      writ_log_bundle: 1,
      server: "http://fake.invalid/",
      fetched_at: "2026-03-01T10:00:01.000Z",
      sequence,
      entry: structuredClone(this.entries[sequence - 1]),
      proof: this.proof(sequence),
      tree_head: await this.head(),
      keys: keyListOf(this.signer),
    };
  }
}
