/**
 * A transparency log of 100,000 entries, written through `appendToLog` in batches of varying
 * size (each batch one signed head): inclusion proofs of 200 random entries and consistency
 * proofs between 100 random pairs of sizes, fetched over HTTP, verify with the core verifiers
 * against the signed heads (and, for sizes no head was signed at, against roots computed here
 * from the leaves alone).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashBytes, type HashString } from "../../src/core/canonical/index.js";
import { signerFromSeed, type PublicJwk } from "../../src/core/jose/index.js";
import {
  appendLeaves,
  logLeafHash,
  nodeKey,
  rootAt,
  verifyConsistency,
  verifyInclusion,
  verifyLogLink,
  verifyTreeHead,
  type LogEntry,
  type LogKind,
  type TreeHead,
} from "../../src/core/tlog/index.js";
import { appendToLog, type LogAppendInput } from "../../src/store/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const TOTAL = 100_000;
const SEED = randomBytes(32).toString("hex");
const KINDS: LogKind[] = ["agreement", "revocation", "registration", "incident"];

let db: TestDatabase;
let server: TestServer;
let key: PublicJwk;
const entries: LogEntry[] = [];
const heads: TreeHead[] = [];
let localNode: (level: number, index: number) => Buffer;

const buf = (h: string) => hashBytes(h as HashString);
const pick = (n: number) => 1 + Math.floor(Math.random() * n);

async function getJson<T>(path: string): Promise<{ status: number; body: T }> {
  const r = await fetch(`${server.url}${path}`);
  return { status: r.status, body: (await r.json()) as T };
}

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ DATABASE_URL: db.url, SVC_LOG_SIGNING_SEED: SEED, WRIT_LOG_ORIGIN: "writ.test/scale" }, { pool: db.pool });
  key = signerFromSeed(SEED).publicJwk;
}, 120_000);

afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe("a log of 100,000 entries", () => {
  it("is written in big batches, one signed head per batch", async () => {
    const signer = signerFromSeed(SEED);
    const started = performance.now();
    for (let written = 0; written < TOTAL;) {
      const n = Math.min(TOTAL - written, 1000 + Math.floor(Math.random() * 4001));
      const batch: LogAppendInput[] = Array.from({ length: n }, (_, i) => ({
        kind: KINDS[(written + i) % 4] as LogKind,
        body: { n: written + i, tag: `e${written + i}` },
      }));
      const out = await appendToLog(db.pool, batch, signer, { origin: "writ.test/scale" });
      entries.push(...out.entries);
      heads.push(out.head);
      written += n;
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(`log-scale: ${TOTAL} entries in ${heads.length} batches in ${seconds.toFixed(1)} s`);
    expect(entries.map((e) => e.sequence)).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));
    let prev: LogEntry | undefined;
    for (const e of entries) {
      expect(verifyLogLink(prev, e)).toBeUndefined();
      prev = e;
    }
    const { rows } = await db.pool.query<{ entries: string; nodes: string; heads: string }>(
      "SELECT (SELECT count(*) FROM log_entries) AS entries, (SELECT count(*) FROM log_nodes) AS nodes, (SELECT count(*) FROM log_heads) AS heads",
    );
    // Every full subtree is stored once: 2n - popcount(n) nodes.
    expect(rows[0]).toEqual({ entries: String(TOTAL), nodes: String(2 * TOTAL - 6), heads: String(heads.length) });

    // The same tree computed here from the leaves alone, to check roots at any size.
    const tree = appendLeaves(0, [], entries.map(logLeafHash));
    const nodes = new Map(tree.nodes.map((n) => [nodeKey(n.level, n.index), n.hash]));
    localNode = (level, index) => nodes.get(nodeKey(level, index)) as Buffer;
    expect(tree.root).toEqual(buf((heads[heads.length - 1] as TreeHead).root));
  }, 120_000);

  it("every head is signed and its root is the root of its first tree_size leaves", async () => {
    for (const h of heads) {
      await verifyTreeHead(h, key);
      expect(buf(h.root)).toEqual(rootAt(h.tree_size, localNode));
    }
  });

  it("inclusion proofs of 200 random entries verify against the signed head", async () => {
    const latest = await getJson<TreeHead>("/v1/log/head");
    const head = await verifyTreeHead(latest.body, key);
    expect(head.tree_size).toBe(TOTAL);
    for (let i = 0; i < 200; i++) {
      const seq = i === 0 ? 1 : i === 1 ? TOTAL : pick(TOTAL);
      const r = await getJson<{ leaf: string; index: number; proof: { hash: string }[]; root: string; tree_size: number }>(`/v1/log/entries/${seq}/proof`);
      expect(r.status).toBe(200);
      const entry = entries[seq - 1] as LogEntry;
      expect(buf(r.body.leaf)).toEqual(logLeafHash(entry));
      expect(r.body.root).toBe(head.root);
      expect(r.body.proof.length).toBeLessThanOrEqual(17);
      expect(() =>
        verifyInclusion(
          logLeafHash(entry),
          seq - 1,
          TOTAL,
          r.body.proof.map((p) => buf(p.hash)),
          buf(head.root),
        ),
      ).not.toThrow();
    }
  });

  it("inclusion proofs against older heads verify", async () => {
    for (let i = 0; i < 20; i++) {
      const h = heads[Math.floor(Math.random() * heads.length)] as TreeHead;
      const seq = pick(h.tree_size);
      const r = await getJson<{ proof: { hash: string }[]; root: string }>(`/v1/log/entries/${seq}/proof?tree_size=${h.tree_size}`);
      expect(r.body.root).toBe(h.root);
      const leaf = logLeafHash(entries[seq - 1] as LogEntry);
      expect(() =>
        verifyInclusion(
          leaf,
          seq - 1,
          h.tree_size,
          r.body.proof.map((p) => buf(p.hash)),
          buf(h.root),
        ),
      ).not.toThrow();
    }
  });

  it("consistency proofs between 100 random pairs of sizes verify", async () => {
    for (let i = 0; i < 100; i++) {
      let first: number;
      let second: number;
      let root1: Buffer;
      let root2: Buffer;
      if (i % 2 === 0) {
        // Two signed heads: the roots are the signed ones.
        const a = heads[Math.floor(Math.random() * heads.length)] as TreeHead;
        const b = heads[Math.floor(Math.random() * heads.length)] as TreeHead;
        const [x, y] = a.tree_size <= b.tree_size ? [a, b] : [b, a];
        [first, second, root1, root2] = [x.tree_size, y.tree_size, buf(x.root), buf(y.root)];
      } else {
        // Any two sizes: the roots are computed here from the leaves.
        const a = pick(TOTAL);
        const b = pick(TOTAL);
        [first, second] = a <= b ? [a, b] : [b, a];
        [root1, root2] = [rootAt(first, localNode), rootAt(second, localNode)];
      }
      const r = await getJson<{ first: number; second: number; proof: string[] }>(`/v1/log/consistency?first=${first}&second=${second}`);
      expect(r.status).toBe(200);
      expect(() => verifyConsistency(first, second, r.body.proof.map(buf), root1, root2)).not.toThrow();
    }
  });
});
