/**
 * The log verbs against a real server on a real Postgres: `writ log verify --server` proves an
 * appended entry live (pinned by kid, by key file, and unpinned); `writ log bundle` saves a
 * bundle that `writ log verify --bundle` proves with no network at all; one changed byte in
 * the bundle file (entry, proof, head, signature) fails with exit 1 naming the step; `writ log
 * monitor --once` follows the real head across appends.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logGroup } from "../../src/cli/log/index.js";
import { signerFromSeed } from "../../src/core/jose/index.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { runVerb } from "../unit/cli/capture.js";
import { tempDir } from "../unit/cli/fixtures.js";

const TOKEN = `tok_${randomBytes(16).toString("hex")}`;
const SEED = randomBytes(32).toString("hex");
const logSigner = signerFromSeed(SEED);
const dir = tempDir("writ-cli-log-");
const logKeyFile = join(dir, "log.public.jwk.json");
let db: TestDatabase;
let server: TestServer;

async function append(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const r = await fetch(`${server.url}/v1/log/entries`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ kind: "incident", body: { note: `cli test ${i}`, nonce: randomBytes(4).toString("hex") } }),
    });
    expect(r.status).toBeLessThan(300);
  }
}

const noNetwork = { fetch: (() => Promise.reject(new Error("the network was used"))) as typeof fetch };

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ DATABASE_URL: db.url, SVC_APPEND_TOKEN: TOKEN, SVC_LOG_SIGNING_SEED: SEED }, { pool: db.pool });
  writeFileSync(logKeyFile, JSON.stringify(logSigner.publicJwk));
  await append(9);
});

afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe("writ log verify --server", () => {
  it.each([
    ["--kid", () => ["--kid", logSigner.kid], "(pinned)"],
    ["--key-file", () => ["--key-file", logKeyFile], "(pinned)"],
    ["no pin", () => [], "unpinned: trusts the key list"],
  ])("proves entry 4 with %s", async (_label, pin, trust) => {
    const r = await runVerb(logGroup, ["verify", "--server", server.url, "--sequence", "4", ...pin()]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    for (const step of ["entry", "leaf", "key", "tree head", "inclusion"]) expect(r.out).toMatch(new RegExp(`ok {4}${step}`));
    expect(r.out).toContain(`verified: entry 4 is in the log whose head of 9 entries`);
    expect(r.out).toContain(trust);
  });

  it("fails (exit 1) for an entry beyond the head, and for a pin that is not the log key", async () => {
    let r = await runVerb(logGroup, ["verify", "--server", server.url, "--sequence", "100"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("entry 100 is not in the log: the signed tree head has 9 entries");
    r = await runVerb(logGroup, ["verify", "--server", server.url, "--sequence", "1", "--kid", `sha256:${"0".repeat(64)}`]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("FAIL  key");
  });
});

describe("writ log bundle + writ log verify --bundle", () => {
  let bundlePath = "";
  let text = "";

  beforeAll(async () => {
    bundlePath = join(dir, "entry-7.json");
    const r = await runVerb(logGroup, ["bundle", "--server", server.url, "--sequence", "7", "--out", bundlePath]);
    expect(r.code).toBe(0);
    expect(r.err).toContain(`wrote ${bundlePath}: entry 7`);
    text = readFileSync(bundlePath, "utf8");
    const again = await runVerb(logGroup, ["bundle", "--server", server.url, "--sequence", "7", "--out", bundlePath]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("already exists; pass --force");
  });

  it("verifies offline, with no network at all", async () => {
    const r = await runVerb(logGroup, ["verify", "--bundle", bundlePath, "--kid", logSigner.kid], noNetwork);
    expect(r.code).toBe(0);
    expect(r.out).toContain("verified: entry 7 is in the log whose head of 9 entries");
  });

  /** The bundle text with one character changed inside the first value of `member` after `after`. */
  function oneByteChanged(member: string, after = ""): string {
    const from = after === "" ? 0 : text.indexOf(after);
    const at = text.indexOf(`"${member}": `, from);
    expect(at).toBeGreaterThan(-1);
    const valueStart = at + member.length + 4;
    const quoted = text[valueStart] === '"';
    const i = valueStart + (!quoted ? 0 : text.startsWith('"sha256:', valueStart) ? 12 : 2);
    const c = text[i] as string;
    const replacement = /[0-9]/.test(c) ? (c === "1" ? "2" : "1") : c === "a" ? "b" : "a";
    return `${text.slice(0, i)}${replacement}${text.slice(i + 1)}`;
  }

  it.each([
    ["the entry's body", "note", '"entry"', "entry"],
    ["the entry's hash", "entry_hash", '"entry"', "entry"],
    ["a proof hash", "hash", '"proof"', "inclusion"],
    ["the proof's leaf", "leaf", '"proof"', "leaf"],
    ["the head's root", "root", '"tree_head"', "tree head"],
    ["the head's tree_size", "tree_size", '"tree_head"', "tree head"],
    ["the head's signature", "signature", '"protected"', "tree head"],
  ])("one changed byte in %s fails with exit 1 at the named step", async (_what, member, after, step) => {
    const changed = oneByteChanged(member, after);
    expect(changed.length).toBe(text.length);
    expect([...changed].filter((c, i) => c !== text[i])).toHaveLength(1);
    const path = join(dir, `changed-${member}.json`);
    writeFileSync(path, changed);
    const r = await runVerb(logGroup, ["verify", "--bundle", path, "--key-file", logKeyFile], noNetwork);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`FAIL  ${step}`);
    expect(r.out).toContain(`NOT verified: the ${step} step failed`);
  });
});

describe("writ log monitor --once against the real head", () => {
  it("records the head, then verifies the grown head's consistency proof", async () => {
    const state = join(dir, "monitor.json");
    let r = await runVerb(logGroup, ["monitor", "--server", server.url, "--once", "--state", state, "--key-file", logKeyFile]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("first head seen");
    await append(4);
    r = await runVerb(logGroup, ["monitor", "--server", server.url, "--once", "--state", state, "--key-file", logKeyFile]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/tree_size 1[0-9] .*consistent with the verified head of 9/);
    r = await runVerb(logGroup, ["monitor", "--server", server.url, "--once", "--state", state]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("unchanged");
  });
});
