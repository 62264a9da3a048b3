/**
 * `writ log verify --bundle`: a sound bundle verifies offline, step by step; ONE changed byte
 * in the entry, the proof, the head or its signature makes it fail with exit 1 and a message
 * naming the failed step; the trust model (unpinned vs pinned key) behaves as documented.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { logGroup } from "../../../../src/cli/log/index.js";
import { verifyBundle } from "../../../../src/cli/log/verify-bundle.js";
import type { LogBundle } from "../../../../src/cli/log/bundle-format.js";
import { generateSigner } from "../../../../src/core/jose/index.js";
import { runVerb } from "../capture.js";
import { tempDir } from "../fixtures.js";
import { FakeLog, keyListOf } from "./fake-log.js";

const dir = tempDir("writ-bundle-");
let log: FakeLog;
let bundle: LogBundle;
let logKeyFile: string;

function write(b: unknown, name = `b-${Math.random().toString(36).slice(2)}.json`): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(b, null, 2));
  return path;
}

function verifyFile(path: string, ...extra: string[]) {
  return runVerb(logGroup, ["verify", "--bundle", path, ...extra]);
}

/** `text` with the character at `i` replaced by `c`. */
const replaceAt = (text: string, i: number, c: string) => `${text.slice(0, i)}${c}${text.slice(i + 1)}`;

/** A different character of the same class (hex stays hex, base64url stays base64url, digits stay digits). */
function flip(c: string): string {
  if (/[0-9]/.test(c)) return c === "7" ? "8" : "7";
  if (/[a-f]/.test(c)) return c === "a" ? "b" : "a";
  return c === "A" ? "B" : "A";
}

beforeAll(async () => {
  log = new FakeLog(generateSigner(), 11);
  bundle = await log.bundle(6);
  logKeyFile = join(dir, "log.public.jwk.json");
  writeFileSync(logKeyFile, JSON.stringify(log.signer.publicJwk));
});

describe("writ log verify --bundle", () => {
  it("verifies a sound bundle and says what each step established", async () => {
    const r = await verifyFile(write(bundle), "--key-file", logKeyFile);
    expect(r.code).toBe(0);
    for (const step of ["entry", "leaf", "key", "tree head", "inclusion"]) expect(r.out).toMatch(new RegExp(`ok {4}${step}`));
    expect(r.out).toContain("entry_hash");
    expect(r.out).toContain(`pinned by --key-file ${logKeyFile}`);
    expect(r.out).toContain("verified: entry 6 is in the log whose head of 11 entries");
    expect(r.out).toContain("(pinned)");
  });

  it("unpinned, it names the trust it relies on; --kid pins by thumbprint; json output is the report", async () => {
    let r = await verifyFile(write(bundle));
    expect(r.code).toBe(0);
    expect(r.out).toContain("from the bundle's key list (unpinned: this trusts that list; pin with --kid or --key-file)");
    r = await verifyFile(write(bundle), "--kid", log.signer.kid, "--output", "json");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as { verified: boolean; steps: unknown[]; tree_head: Record<string, unknown> };
    expect(report.verified).toBe(true);
    expect(report.steps).toHaveLength(5);
    expect(report.tree_head).toMatchObject({ tree_size: 11, kid: log.signer.kid, pinned: true });
  });

  it("a bundle forged with another key verifies only unpinned; a pin refuses it", async () => {
    const mallory = generateSigner();
    const forged = { ...bundle, tree_head: await log.head(11, "2026-03-01T10:00:00Z", mallory), keys: keyListOf(mallory) };
    const path = write(forged);
    expect((await verifyFile(path)).code).toBe(0);
    const pinned = await verifyFile(path, "--key-file", logKeyFile);
    expect(pinned.code).toBe(1);
    expect(pinned.out).toContain("FAIL  key");
    expect(pinned.out).toContain(`not by the pinned key ${log.signer.kid}`);
    const byKid = await verifyFile(path, "--kid", log.signer.kid);
    expect(byKid.code).toBe(1);
    expect(byKid.out).toContain(`holds no key with the pinned kid ${log.signer.kid}`);
  });

  it.each([
    ["the entry body", (b: LogBundle) => ((b.entry as { body: { note: string } }).body.note = "entry 7"), "entry", "entry_hash does not match the entry"],
    [
      "the entry_hash",
      (b: LogBundle) => {
        const e = b.entry as { entry_hash: string };
        e.entry_hash = replaceAt(e.entry_hash, 20, flip(e.entry_hash[20] as string));
      },
      "entry",
      "entry_hash does not match",
    ],
    [
      "a proof hash",
      (b: LogBundle) => {
        const step = (b.proof as { proof: Array<{ hash: string }> }).proof[1] as { hash: string };
        step.hash = replaceAt(step.hash, 30, flip(step.hash[30] as string));
      },
      "inclusion",
      "inclusion proof does not verify",
    ],
    [
      "a proof side hint",
      (b: LogBundle) => {
        const step = (b.proof as { proof: Array<{ side: string }> }).proof[0] as { side: string };
        step.side = step.side === "left" ? "light" : "reft";
      },
      "leaf",
      "side",
    ],
    [
      "the proof's leaf",
      (b: LogBundle) => {
        const p = b.proof as { leaf: string };
        p.leaf = replaceAt(p.leaf, 9, flip(p.leaf[9] as string));
      },
      "leaf",
      "is not the proof's leaf",
    ],
    [
      "the proof's tree_size",
      (b: LogBundle) => ((b.proof as { tree_size: number }).tree_size = 12),
      "inclusion",
      "the proof is for a tree of 12 entries, the signed head has 11",
    ],
    [
      "the proof's tree_size (to one the index does not fit)",
      (b: LogBundle) => ((b.proof as { tree_size: number }).tree_size = 5),
      "leaf",
      "does not fit index 5 in a tree of 5",
    ],
    [
      "the head's root",
      (b: LogBundle) => {
        const h = b.tree_head as { root: string };
        h.root = replaceAt(h.root, 40, flip(h.root[40] as string));
      },
      "tree head",
      "does not verify",
    ],
    ["the head's tree_size", (b: LogBundle) => ((b.tree_head as { tree_size: number }).tree_size = 17), "tree head", "does not verify"],
    ["the head's time", (b: LogBundle) => ((b.tree_head as { at: string }).at = "2026-03-01T10:00:01Z"), "tree head", "does not verify"],
    [
      "the signature bytes",
      (b: LogBundle) => {
        const s = (b.tree_head as { signature: { signature: string } }).signature;
        s.signature = replaceAt(s.signature, 10, flip(s.signature[10] as string));
      },
      "tree head",
      "JWS signature does not verify",
    ],
    [
      "the signature's protected header",
      (b: LogBundle) => {
        const s = (b.tree_head as { signature: { protected: string } }).signature;
        s.protected = replaceAt(s.protected, 5, flip(s.protected[5] as string));
      },
      "key",
      "tree head",
    ],
  ])("one change in %s fails with exit 1, naming the failed step", async (_what, mutate, step, message) => {
    const changed = structuredClone(bundle);
    mutate(changed);
    const r = await verifyFile(write(changed), "--key-file", logKeyFile);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`FAIL  ${step}`);
    expect(r.out).toContain(message);
    expect(r.out).toContain(`NOT verified: the ${step} step failed`);
  });

  it("property: any single changed character in the entry, proof or head that changes the bundle fails", async () => {
    const sections = ["entry", "proof", "tree_head"] as const;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...sections), fc.nat(), fc.integer({ min: 0x21, max: 0x7e }), async (section, pos, code) => {
        const text = JSON.stringify(bundle[section]);
        const i = pos % text.length;
        const c = String.fromCharCode(code);
        fc.pre(text[i] !== c);
        let value: unknown;
        try {
          value = JSON.parse(replaceAt(text, i, c));
        } catch {
          fc.pre(false);
        }
        fc.pre(JSON.stringify(value) !== text);
        const report = await verifyBundle(
          { ...structuredClone(bundle), [section]: value },
          { kind: "key", key: log.signer.publicJwk, source: "k" },
          "the bundle's key list",
        );
        expect(report.verified).toBe(false);
        expect(report.steps.at(-1)?.ok).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it("a bundle that is not a bundle, or asks for another sequence than its entry, fails with exit 1", async () => {
    let r = await verifyFile(write({ hello: 1 }));
    expect(r.code).toBe(1);
    expect(r.err).toContain("not a log bundle");
    r = await verifyFile(write({ ...bundle, sequence: 5 }));
    expect(r.code).toBe(1);
    expect(r.out).toContain("the entry has sequence 6, not the 5 asked for");
    const broken = join(dir, "broken.json");
    writeFileSync(broken, "{ not json");
    r = await verifyFile(broken);
    expect(r.code).toBe(1);
    expect(r.err).toContain("is not JSON");
  });

  it("a key list entry whose stated kid is not its thumbprint is refused", async () => {
    const lying = { ...bundle, keys: { keys: [{ public_key: { ...log.signer.publicJwk, kid: generateSigner().kid } }] } };
    const r = await verifyFile(write(lying));
    expect(r.code).toBe(1);
    expect(r.out).toContain("states kid");
  });

  it("bad usage: --bundle with --server, neither, --key-file with --kid, a bad --kid", async () => {
    const path = write(bundle);
    expect((await verifyFile(path, "--server", "http://x")).code).toBe(2);
    expect((await runVerb(logGroup, ["verify"])).code).toBe(2);
    expect((await verifyFile(path, "--key-file", logKeyFile, "--kid", log.signer.kid)).code).toBe(2);
    const r = await verifyFile(path, "--kid", "abc");
    expect(r.code).toBe(2);
    expect(r.err).toContain("--kid must be sha256:");
    expect((await runVerb(logGroup, ["verify", "--server", "ftp://x", "--sequence", "1"])).code).toBe(2);
    expect((await runVerb(logGroup, ["verify", "--server", "http://x", "--sequence", "0"])).code).toBe(2);
  });
});
