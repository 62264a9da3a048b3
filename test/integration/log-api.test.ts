/**
 * The transparency log over real HTTP against real Postgres: every endpoint, status, header and
 * exact error text; proofs from the API verify with the core verifiers against the signed head,
 * whose JWS verifies with the key published at /.well-known/svc-keys.json.
 */
import { createHash, createPublicKey, randomBytes, verify as cryptoVerify } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashBytes, type HashString } from "../../src/core/canonical/index.js";
import { generateSigner, parsePublicJwk, signerFromSeed, type PublicJwk } from "../../src/core/jose/index.js";
import {
  logLeafHash,
  parseNoteVerifierKey,
  proofSides,
  verifyCheckpoint,
  verifyConsistency,
  verifyInclusion,
  verifyLogEntry,
  verifyLogLink,
  verifyTreeHead,
  type LogEntry,
  type TreeHead,
} from "../../src/core/tlog/index.js";
import { appendLogEntries, appendToLog } from "../../src/store/log.js";
import { withTransaction } from "../../src/store/pool.js";
import { appendRevocationToLog } from "../../src/store/revocation/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { makeRevocation } from "../helpers/revocation-push.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const TOKEN = `tok_${randomBytes(16).toString("hex")}`;
const SEED = randomBytes(32).toString("hex");
const ORIGIN = "writ.test/log";

let db: TestDatabase;
let server: TestServer;
let logKey: PublicJwk;
const others: TestServer[] = [];

type Json = Record<string, unknown>;
interface Answer<T = Json> {
  status: number;
  headers: Headers;
  body: T;
}

async function call<T = Json>(path: string, init: RequestInit = {}, base = server.url): Promise<Answer<T>> {
  const r = await fetch(`${base}${path}`, init);
  const text = await r.text();
  const type = r.headers.get("content-type") ?? "";
  return { status: r.status, headers: r.headers, body: (type.includes("json") ? JSON.parse(text) : text) as T };
}

function append(body: unknown, auth: string | null = `Bearer ${TOKEN}`, base = server.url) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (auth !== null) headers.authorization = auth;
  return call<{ entry: LogEntry; tree_head: TreeHead; error?: string }>(
    "/v1/log/entries",
    { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) },
    base,
  );
}

const get = <T = Json>(path: string, base = server.url) => call<T>(path, {}, base);
const buf = (h: string) => hashBytes(h as HashString);

async function startLogServer(env: Record<string, string>, withPool = true): Promise<TestServer> {
  const s = await startTestServer(env, withPool ? { pool: db.pool } : {});
  others.push(s);
  return s;
}

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ DATABASE_URL: db.url, SVC_APPEND_TOKEN: TOKEN, SVC_LOG_SIGNING_SEED: SEED, WRIT_LOG_ORIGIN: ORIGIN }, { pool: db.pool });
  const keys = await get<{ keys: { public_key: Json }[] }>("/.well-known/svc-keys.json");
  logKey = parsePublicJwk(keys.body.keys[0]?.public_key);
});

afterAll(async () => {
  await Promise.all(others.map((s) => s.close()));
  await server?.close();
  await db?.drop();
});

describe("an empty log", () => {
  it("has no head, checkpoint, entry or proof", async () => {
    const noHead = { error: "the transparency log has no signed tree head" };
    expect(await get("/v1/log/head")).toMatchObject({ status: 404, body: noHead });
    expect(await get("/v1/log/checkpoint")).toMatchObject({ status: 404, body: noHead });
    expect(await get("/v1/log/consistency?first=1&second=1")).toMatchObject({ status: 404, body: noHead });
    expect(await get("/v1/log/entries/1")).toMatchObject({ status: 404, body: { error: "log entry was not found" } });
    expect(await get("/v1/log/entries/1/proof")).toMatchObject({ status: 404, body: { error: "log entry was not found" } });
  });
});

describe("POST /v1/log/entries: refusals", () => {
  const mismatch = { error: "append token does not match" };
  const good = { kind: "incident", body: { n: 0 } };

  it.each([
    ["no Authorization header", null],
    ["another scheme", `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}`],
    ["a wrong token", "Bearer nope"],
    ["the token with a suffix", `Bearer ${TOKEN}x`],
    ["a prefix of the token", `Bearer ${TOKEN.slice(0, -1)}`],
    ["Bearer without a token", "Bearer "],
    ["the bare token", TOKEN],
  ])("is 401 for %s", async (_what, auth) => {
    expect(await append(good, auth)).toMatchObject({ status: 401, body: mismatch });
  });

  it("checks the token before the body", async () => {
    expect(await append("{not json", "Bearer nope")).toMatchObject({ status: 401, body: mismatch });
    expect(await append({}, null)).toMatchObject({ status: 401, body: mismatch });
  });

  const needs = { error: "log append needs kind and a body object" };
  it.each([
    ["an empty object", {}],
    ["no kind", { body: {} }],
    ["a null kind", { kind: null, body: {} }],
    ["no body", { kind: "incident" }],
    ["a null body", { kind: "incident", body: null }],
    ["an array body", { kind: "incident", body: [] }],
    ["a string body", { kind: "incident", body: "text" }],
    ["a number body", { kind: "agreement", body: 3 }],
    ["an array request", [good]],
    ["a string request", '"incident"'],
  ])("is 400 for %s", async (_what, body) => {
    expect(await append(body)).toMatchObject({ status: 400, body: needs });
  });

  it("is 400 for a request without a body", async () => {
    const r = await call("/v1/log/entries", { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r).toMatchObject({ status: 400, body: needs });
  });

  it.each(["bogus", "Agreement", "", 5, true, { kind: "incident" }])("is 400 for the kind %j", async (kind) => {
    const r = await append({ kind, body: {} });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("log entry kind is not accepted: use one of agreement, revocation, registration, incident");
  });

  it("is 400 for malformed JSON with a valid token", async () => {
    expect(await append("{not json")).toMatchObject({ status: 400, body: { error: "request body is not valid JSON" } });
  });

  it("appended nothing", async () => {
    expect((await get("/v1/log/head")).status).toBe(404);
  });
});

describe("POST /v1/log/entries and the reads", () => {
  const appended: { entry: LogEntry; head: TreeHead }[] = [];
  const kinds = ["agreement", "revocation", "registration", "incident"] as const;

  it("appends the first entry with a signed head of size 1", async () => {
    const r = await append({ kind: "agreement", body: { b: [1, 2.5, "é"], a: { z: null, y: true } }, ignored: 1 });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    expect(r.headers.get("x-request-id")).toBeTruthy();
    const { entry, tree_head } = r.body;
    expect(Object.keys(r.body).sort()).toEqual(["entry", "tree_head"]);
    expect(entry).toMatchObject({ kind: "agreement", sequence: 1, body: { a: { y: true, z: null }, b: [1, 2.5, "é"] } });
    expect(entry).not.toHaveProperty("prev_entry_hash");
    expect(verifyLogEntry(entry)).toBeUndefined();
    const head = await verifyTreeHead(tree_head, logKey);
    expect(head.tree_size).toBe(1);
    expect(buf(head.root)).toEqual(logLeafHash(entry));
    expect(JSON.parse(Buffer.from(tree_head.signature.protected, "base64url").toString())).toMatchObject({
      alg: "EdDSA",
      typ: "svc-tree-head+jws",
      kid: signerFromSeed(SEED).kid,
    });
    appended.push({ entry, head: tree_head });
  });

  it("accepts a lower-case bearer scheme", async () => {
    const r = await append({ kind: "incident", body: { case: "lower" } }, `bearer ${TOKEN}`);
    expect(r.status).toBe(200);
    appended.push({ entry: r.body.entry, head: r.body.tree_head });
  });

  it("appends one after another, each kind, every entry chained and every head signed", async () => {
    for (let i = 0; i < 22; i++) {
      const r = await append({ kind: kinds[i % 4], body: { i, note: `entry ${i}` } });
      expect(r.status).toBe(200);
      appended.push({ entry: r.body.entry, head: r.body.tree_head });
    }
    let prev: LogEntry | undefined;
    for (const [i, { entry, head }] of appended.entries()) {
      expect(entry.sequence).toBe(i + 1);
      expect(verifyLogEntry(entry)).toBeUndefined();
      expect(verifyLogLink(prev, entry)).toBeUndefined();
      expect((await verifyTreeHead(head, logKey)).tree_size).toBe(entry.sequence);
      prev = entry;
    }
  });

  it("GET /v1/log/head is the latest signed head", async () => {
    const r = await get<TreeHead>("/v1/log/head");
    expect(r.status).toBe(200);
    const last = appended[appended.length - 1];
    expect(r.body).toEqual(last?.head);
    await verifyTreeHead(r.body, logKey);
  });

  it("GET /v1/log/entries/{sequence} and by-hash return each entry", async () => {
    for (const { entry } of appended) {
      expect(await get(`/v1/log/entries/${entry.sequence}`)).toMatchObject({ status: 200, body: { entry } });
      expect(await get(`/v1/log/entries/by-hash/${entry.entry_hash}`)).toMatchObject({ status: 200, body: { entry } });
    }
  });

  it.each(["0", "-1", "abc", "1.5", "1e1", "0x1", "01", "+1", "99999999999999999999", "9007199254740993", "25", "1000000"])(
    "GET /v1/log/entries/%s is 404",
    async (seq) => {
      expect(await get(`/v1/log/entries/${seq}`)).toMatchObject({ status: 404, body: { error: "log entry was not found" } });
      expect(await get(`/v1/log/entries/${seq}/proof`)).toMatchObject({ status: 404, body: { error: "log entry was not found" } });
    },
  );

  it.each([`sha256:${"0".repeat(64)}`, "sha256:abc", `sha256:${"A".repeat(64)}`, "nothing"])("GET by-hash/%s is 404", async (h) => {
    expect(await get(`/v1/log/entries/by-hash/${h}`)).toMatchObject({ status: 404, body: { error: "log entry was not found" } });
  });

  it("every inclusion proof verifies against the signed head", async () => {
    const head = await verifyTreeHead((await get("/v1/log/head")).body, logKey);
    for (const { entry } of appended) {
      const r = await get<{
        sequence: number;
        index: number;
        leaf: string;
        proof: { hash: string; side: "left" | "right" }[];
        root: string;
        tree_size: number;
      }>(`/v1/log/entries/${entry.sequence}/proof`);
      expect(r.status).toBe(200);
      const p = r.body;
      expect(Object.keys(p).sort()).toEqual(["index", "leaf", "proof", "root", "sequence", "tree_size"]);
      expect(p).toMatchObject({ sequence: entry.sequence, index: entry.sequence - 1, root: head.root, tree_size: head.tree_size });
      expect(buf(p.leaf)).toEqual(logLeafHash(entry));
      const path = p.proof.map((x) => buf(x.hash));
      expect(p.proof.map((x) => x.side)).toEqual(proofSides(p.index, p.tree_size, path));
      expect(() => verifyInclusion(logLeafHash(entry), p.index, head.tree_size, path, buf(head.root))).not.toThrow();
    }
  });

  it("?tree_size proves against an older signed head", async () => {
    for (const { entry, head } of appended) {
      for (const older of appended.filter((a) => a.head.tree_size >= entry.sequence).slice(0, 4)) {
        const r = await get<{ proof: { hash: string }[]; root: string; tree_size: number }>(
          `/v1/log/entries/${entry.sequence}/proof?tree_size=${older.head.tree_size}`,
        );
        expect(r.status).toBe(200);
        expect(r.body.root).toBe(older.head.root);
        expect(r.body.tree_size).toBe(older.head.tree_size);
        const path = r.body.proof.map((x) => buf(x.hash));
        expect(() => verifyInclusion(logLeafHash(entry), entry.sequence - 1, older.head.tree_size, path, buf(older.head.root))).not.toThrow();
      }
      expect(head.tree_size).toBe(entry.sequence);
    }
  });

  it("refuses a ?tree_size outside the log", async () => {
    const size = appended.length;
    expect(await get(`/v1/log/entries/1/proof?tree_size=${size + 1}`)).toMatchObject({
      status: 404,
      body: { error: "tree size is beyond the latest signed tree head" },
    });
    expect(await get(`/v1/log/entries/5/proof?tree_size=4`)).toMatchObject({ status: 404, body: { error: "log entry was not found" } });
    for (const bad of ["0", "-3", "abc", "1.5", "99999999999999999999"]) {
      const r = await get(`/v1/log/entries/1/proof?tree_size=${bad}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/tree_size/);
    }
  });

  it("GET /v1/log/consistency proves every signed head extends the ones before", async () => {
    const heads = appended.map((a) => a.head);
    for (let i = 0; i < heads.length; i++) {
      for (const j of [i, i + 1, heads.length - 1]) {
        const a = heads[i] as TreeHead;
        const b = heads[Math.min(j, heads.length - 1)] as TreeHead;
        const r = await get<{ first: number; second: number; proof: string[] }>(`/v1/log/consistency?first=${a.tree_size}&second=${b.tree_size}`);
        expect(r.status).toBe(200);
        expect(r.body.first).toBe(a.tree_size);
        expect(r.body.second).toBe(b.tree_size);
        expect(() => verifyConsistency(a.tree_size, b.tree_size, r.body.proof.map(buf), buf(a.root), buf(b.root))).not.toThrow();
      }
    }
  });

  it("refuses consistency sizes out of order, beyond the head or malformed", async () => {
    const size = appended.length;
    expect(await get("/v1/log/consistency?first=3&second=2")).toMatchObject({
      status: 400,
      body: { error: "consistency proof needs 1 <= first <= second" },
    });
    expect(await get(`/v1/log/consistency?first=1&second=${size + 1}`)).toMatchObject({
      status: 404,
      body: { error: "tree size is beyond the latest signed tree head" },
    });
    for (const q of ["first=0&second=1", "first=1", "second=1", "first=a&second=2", "first=1&second=99999999999999999999"]) {
      expect((await get(`/v1/log/consistency?${q}`)).status).toBe(400);
    }
  });

  it("GET /v1/log/checkpoint is the latest head as a C2SP checkpoint signed by the log key", async () => {
    const r = await get<string>("/v1/log/checkpoint");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const head = (await get<TreeHead>("/v1/log/head")).body;
    const { size, root } = verifyCheckpoint(r.body, ORIGIN, logKey);
    expect(size).toBe(head.tree_size);
    expect(root).toEqual(buf(head.root));
    expect(r.body.startsWith(`${ORIGIN}\n${head.tree_size}\n${buf(head.root).toString("base64")}\n\n\u2014 ${ORIGIN} `)).toBe(true);
  });

  it("publishes the signed-note verifier key: a third party checks the checkpoint from the key list alone", async () => {
    const rec = (await get<{ keys: Array<Record<string, unknown>> }>("/.well-known/svc-keys.json")).body.keys[0] as {
      checkpoint_origin: string;
      note_verifier_key: string;
    };
    expect(rec.checkpoint_origin).toBe(ORIGIN);
    // Read the key as golang.org/x/mod/sumdb/note does: name+hash+base64(0x01 || key), hash = SHA-256(name \n 0x01 key)[:4].
    // name+hash+base64: only the first two "+" separate (the base64 may hold "+").
    const [, name, hashHex, b64] = /^([^+]*)\+([^+]*)\+(.*)$/.exec(rec.note_verifier_key) as unknown as [string, string, string, string];
    const data = Buffer.from(b64, "base64");
    expect(name).toBe(ORIGIN);
    expect(data[0]).toBe(0x01);
    const raw = data.subarray(1);
    expect(createHash("sha256").update(`${name}\n`).update(data).digest().subarray(0, 4).toString("hex")).toBe(hashHex);
    // Verify the checkpoint's signature line with nothing but that key.
    const note = (await get<string>("/v1/log/checkpoint")).body;
    const split = note.lastIndexOf("\n\n");
    const text = note.slice(0, split + 1);
    const line = note.slice(split + 2).trimEnd();
    expect(line.startsWith(`\u2014 ${name} `)).toBe(true);
    const sig = Buffer.from(line.slice(`\u2014 ${name} `.length), "base64");
    expect(sig.subarray(0, 4).toString("hex")).toBe(hashHex);
    const spki = Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), raw]);
    expect(cryptoVerify(null, Buffer.from(text), createPublicKey({ key: spki, format: "der", type: "spki" }), sig.subarray(4))).toBe(true);
    // And the core's own reader agrees.
    const parsed = parseNoteVerifierKey(rec.note_verifier_key);
    expect(verifyCheckpoint(note, parsed.name, parsed.key).size).toBe((await get<TreeHead>("/v1/log/head")).body.tree_size);
  });

  it("signs a checkpoint on demand for a head stored without one (the revocation seam)", async () => {
    const before = (await get<TreeHead>("/v1/log/head")).body.tree_size;
    const revocation = await makeRevocation();
    await withTransaction(db.pool, (c) => appendRevocationToLog(c, revocation, signerFromSeed(SEED)));
    const { rows } = await db.pool.query<{ checkpoint: string | null }>("SELECT checkpoint FROM log_heads WHERE tree_size = $1", [before + 1]);
    expect(rows[0]?.checkpoint).toBeNull();
    const entry = await get<{ entry: LogEntry }>(`/v1/log/entries/${before + 1}`);
    expect(entry.body.entry).toMatchObject({ kind: "revocation", body: JSON.parse(JSON.stringify(revocation)) });
    const cp = await get<string>("/v1/log/checkpoint");
    expect(verifyCheckpoint(cp.body, ORIGIN, logKey)).toMatchObject({ size: before + 1 });
    appended.push({ entry: entry.body.entry, head: (await get<TreeHead>("/v1/log/head")).body });
  });

  it("serves the checkpoint under a changed origin", async () => {
    const s = await startLogServer({ DATABASE_URL: db.url, SVC_LOG_SIGNING_SEED: SEED, WRIT_LOG_ORIGIN: "other.example/log" });
    const r = await get<string>("/v1/log/checkpoint", s.url);
    expect(verifyCheckpoint(r.body, "other.example/log", logKey).size).toBe(appended.length);
  });

  it("batches concurrent appends: each caller gets its own entry and its batch's head", async () => {
    const before = appended.length;
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => append({ kind: "incident", body: { concurrent: i } })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const sequences = answers.map((a) => a.body.entry.sequence).sort((x, y) => x - y);
    expect(sequences).toEqual(Array.from({ length: 40 }, (_, i) => before + 1 + i));
    const heads = new Map(answers.map((a) => [a.body.tree_head.tree_size, a.body.tree_head]));
    expect(heads.size).toBeLessThan(40);
    for (const a of answers) {
      const { entry, tree_head } = a.body;
      expect(entry.body).toEqual({ concurrent: answers.indexOf(a) });
      expect(tree_head.tree_size).toBeGreaterThanOrEqual(entry.sequence);
      await verifyTreeHead(tree_head, logKey);
      const p = await get<{ proof: { hash: string }[] }>(`/v1/log/entries/${entry.sequence}/proof?tree_size=${tree_head.tree_size}`);
      const path = p.body.proof.map((x) => buf(x.hash));
      expect(() => verifyInclusion(logLeafHash(entry), entry.sequence - 1, tree_head.tree_size, path, buf(tree_head.root))).not.toThrow();
    }
    const { rows } = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM log_heads WHERE tree_size > $1", [before]);
    expect(Number(rows[0]?.n)).toBe(heads.size);
  });

  it("an append in a caller's transaction that rolls back leaves no trace", async () => {
    const head = (await get<TreeHead>("/v1/log/head")).body;
    const signer = signerFromSeed(SEED);
    await expect(
      withTransaction(db.pool, async (c) => {
        const out = await appendLogEntries(c, [{ kind: "incident", body: { doomed: true } }], signer);
        expect(out.entries[0]?.sequence).toBe(head.tree_size + 1);
        throw new Error("caller gives up");
      }),
    ).rejects.toThrow("caller gives up");
    expect((await get<TreeHead>("/v1/log/head")).body).toEqual(head);
    const r = await append({ kind: "incident", body: { after: "rollback" } });
    expect(r.body.entry.sequence).toBe(head.tree_size + 1);
    const last = await get<{ entry: LogEntry }>(`/v1/log/entries/${head.tree_size}`);
    expect(r.body.entry.prev_entry_hash).toBe(last.body.entry.entry_hash);
    const c = await get<{ proof: string[] }>(`/v1/log/consistency?first=${head.tree_size}&second=${r.body.tree_head.tree_size}`);
    const next = r.body.tree_head;
    expect(() => verifyConsistency(head.tree_size, next.tree_size, c.body.proof.map(buf), buf(head.root), buf(next.root))).not.toThrow();
  });

  it("appendToLog refuses an empty append and writes nothing", async () => {
    await expect(appendToLog(db.pool, [], signerFromSeed(SEED))).rejects.toMatchObject({ code: "LOG_ENTRY_INVALID" });
  });

  it("documents the log routes in /openapi.json", async () => {
    const r = await get<{ paths: Record<string, unknown> }>("/openapi.json");
    expect(Object.keys(r.body.paths)).toEqual(
      expect.arrayContaining([
        "/v1/log/entries",
        "/v1/log/entries/{sequence}",
        "/v1/log/entries/{sequence}/proof",
        "/v1/log/entries/by-hash/{entry_hash}",
        "/v1/log/head",
        "/v1/log/checkpoint",
        "/v1/log/consistency",
      ]),
    );
  });
});

describe("settings", () => {
  it("is 503 naming SVC_APPEND_TOKEN when it is unset", async () => {
    const s = await startLogServer({ DATABASE_URL: db.url, SVC_LOG_SIGNING_SEED: SEED });
    expect(await append({ kind: "incident", body: {} }, `Bearer ${TOKEN}`, s.url)).toMatchObject({
      status: 503,
      body: { error: "SVC_APPEND_TOKEN is not set" },
    });
  });

  it("is 503 naming SVC_LOG_SIGNING_SEED when it is unset, 500 when it does not load", async () => {
    const unset = await startLogServer({ DATABASE_URL: db.url, SVC_APPEND_TOKEN: TOKEN });
    expect(await append({ kind: "incident", body: {} }, `Bearer ${TOKEN}`, unset.url)).toMatchObject({
      status: 503,
      body: { error: "SVC_LOG_SIGNING_SEED is not set" },
    });
    const bad = await startLogServer({ DATABASE_URL: db.url, SVC_APPEND_TOKEN: TOKEN, SVC_LOG_SIGNING_SEED: "not a seed" });
    expect(await append({ kind: "incident", body: {} }, `Bearer ${TOKEN}`, bad.url)).toMatchObject({
      status: 500,
      body: { error: "SVC_LOG_SIGNING_SEED failed to load" },
    });
  });

  it("is 503 DATABASE_URL is not set on every log route without storage", async () => {
    const s = await startLogServer({ SVC_APPEND_TOKEN: TOKEN, SVC_LOG_SIGNING_SEED: SEED }, false);
    const noDb = { status: 503, body: { error: "DATABASE_URL is not set" } };
    expect(await append({ kind: "incident", body: {} }, `Bearer ${TOKEN}`, s.url)).toMatchObject(noDb);
    for (const path of [
      "/v1/log/head",
      "/v1/log/checkpoint",
      "/v1/log/entries/1",
      "/v1/log/entries/1/proof",
      `/v1/log/entries/by-hash/sha256:${"0".repeat(64)}`,
      "/v1/log/consistency?first=1&second=1",
    ]) {
      expect(await get(path, s.url)).toMatchObject(noDb);
    }
  });

  it("a head signed by another key does not verify with the published key", async () => {
    const other = generateSigner();
    const { head } = await appendToLog(db.pool, [{ kind: "incident", body: { other: true } }], other);
    await expect(verifyTreeHead(head, logKey)).rejects.toThrow();
  });
});
