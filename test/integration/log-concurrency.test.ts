/**
 * 8 concurrent appenders x 1,000 appends over HTTP, against two app instances on the same
 * database (so batches of one process and the advisory lock between processes both take
 * part): sequences are gapless 1..8000, the entry chain links verify, every stored head is
 * signed and consistent with the one before it, and every caller's entry is included under
 * the head it was answered with.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashBytes, type HashString } from "../../src/core/canonical/index.js";
import { signerFromSeed, type PublicJwk } from "../../src/core/jose/index.js";
import {
  logLeafHash,
  verifyConsistency,
  verifyInclusion,
  verifyLogEntry,
  verifyLogLink,
  verifyTreeHead,
  type LogEntry,
  type TreeHead,
} from "../../src/core/tlog/index.js";
import { consistencyProofFor, inclusionProofFor, logEntryBySequence } from "../../src/store/log-read.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const APPENDERS = 8;
const EACH = 1000;
const TOKEN = randomBytes(16).toString("hex");
const SEED = randomBytes(32).toString("hex");

let db: TestDatabase;
let servers: TestServer[] = [];
let key: PublicJwk;

const buf = (h: string) => hashBytes(h as HashString);

beforeAll(async () => {
  db = await createTestDatabase();
  const env = { DATABASE_URL: db.url, SVC_APPEND_TOKEN: TOKEN, SVC_LOG_SIGNING_SEED: SEED };
  // Two instances, each with its own pool and batcher, as two replicas of the data plane.
  servers = await Promise.all([startTestServer(env), startTestServer(env)]);
  key = signerFromSeed(SEED).publicJwk;
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await db?.drop();
});

describe(`${APPENDERS} concurrent appenders x ${EACH} appends`, () => {
  const answers: { appender: number; i: number; entry: LogEntry; head: TreeHead }[] = [];

  it("all succeed", async () => {
    await Promise.all(
      Array.from({ length: APPENDERS }, async (_, appender) => {
        const base = (servers[appender % servers.length] as TestServer).url;
        for (let i = 0; i < EACH; i++) {
          const r = await fetch(`${base}/v1/log/entries`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
            body: JSON.stringify({ kind: "incident", body: { appender, i } }),
          });
          if (r.status !== 200) throw new Error(`append ${appender}/${i}: ${r.status} ${await r.text()}`);
          const body = (await r.json()) as { entry: LogEntry; tree_head: TreeHead };
          answers.push({ appender, i, entry: body.entry, head: body.tree_head });
        }
      }),
    );
    expect(answers).toHaveLength(APPENDERS * EACH);
  }, 120_000);

  it("sequences are gapless 1..8000 and each appender's entries keep its order", () => {
    const seqs = answers.map((a) => a.entry.sequence).sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: APPENDERS * EACH }, (_, i) => i + 1));
    for (let appender = 0; appender < APPENDERS; appender++) {
      const mine = answers.filter((a) => a.appender === appender);
      expect(mine.map((a) => a.entry.body.i)).toEqual(Array.from({ length: EACH }, (_, i) => i));
      for (let k = 1; k < mine.length; k++) {
        expect((mine[k] as { entry: LogEntry }).entry.sequence).toBeGreaterThan((mine[k - 1] as { entry: LogEntry }).entry.sequence);
      }
    }
  });

  it("the stored entries form one hash chain and equal what the callers got", async () => {
    const bySeq = new Map(answers.map((a) => [a.entry.sequence, a.entry]));
    const { rows } = await db.pool.query<{ sequence: string }>("SELECT sequence FROM log_entries ORDER BY sequence");
    expect(rows).toHaveLength(APPENDERS * EACH);
    let prev: LogEntry | undefined;
    for (let s = 1; s <= APPENDERS * EACH; s++) {
      const e = (await logEntryBySequence(db.pool, s)) as LogEntry;
      expect(e).toEqual(bySeq.get(s));
      expect(verifyLogEntry(e)).toBeUndefined();
      expect(verifyLogLink(prev, e)).toBeUndefined();
      prev = e;
    }
  }, 60_000);

  it("every stored head is signed and consistent with the one before it", async () => {
    const { rows } = await db.pool.query<{ head: string }>("SELECT head FROM log_heads ORDER BY tree_size");
    const heads = rows.map((r) => JSON.parse(r.head) as TreeHead);
    // Batching shares heads: fewer heads than appends, one for each size the callers saw.
    expect(heads.length).toBeLessThan(APPENDERS * EACH);
    expect(new Set(answers.map((a) => a.head.tree_size))).toEqual(new Set(heads.map((h) => h.tree_size)));
    expect(heads[heads.length - 1]?.tree_size).toBe(APPENDERS * EACH);
    let prev: TreeHead | undefined;
    for (const h of heads) {
      await verifyTreeHead(h, key);
      if (prev) {
        expect(h.tree_size).toBeGreaterThan(prev.tree_size);
        const { proof } = await consistencyProofFor(db.pool, prev.tree_size, h.tree_size);
        expect(() => verifyConsistency(prev!.tree_size, h.tree_size, proof.map(buf), buf(prev!.root), buf(h.root))).not.toThrow();
      }
      prev = h;
    }
  }, 60_000);

  it("each caller's entry is included under the head it was answered with", async () => {
    const answeredHeads = new Map(answers.map((a) => [a.head.tree_size, a.head]));
    for (const a of answers.filter((_, k) => k % 10 === 0)) {
      expect(answeredHeads.get(a.head.tree_size)).toEqual(a.head);
      expect(a.head.tree_size).toBeGreaterThanOrEqual(a.entry.sequence);
      const p = await inclusionProofFor(db.pool, a.entry.sequence, a.head.tree_size);
      expect(p.root).toBe(a.head.root);
      expect(() =>
        verifyInclusion(
          logLeafHash(a.entry),
          a.entry.sequence - 1,
          a.head.tree_size,
          p.proof.map((x) => buf(x.hash)),
          buf(a.head.root),
        ),
      ).not.toThrow();
    }
  }, 60_000);
});
