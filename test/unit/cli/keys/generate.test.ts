/** `writ keys generate`: file modes, the printed kid, overwrite protection, algorithms. */
import { chmodSync, lstatSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keysGroup } from "../../../../src/cli/keys/index.js";
import { keyId, parsePublicJwk, signerFromJwk } from "../../../../src/core/jose/index.js";
import { runVerb } from "../capture.js";

const dir = () => mkdtempSync(join(tmpdir(), "writ-keys-"));
const mode = (p: string) => statSync(p).mode & 0o777;

describe("writ keys generate", () => {
  it("writes the private JWK with mode 0600 and the public JWK, and prints the kid", async () => {
    const prefix = join(dir(), "principal");
    const r = await runVerb(keysGroup, ["generate", "--out", prefix]);
    expect(r.code).toBe(0);
    expect(mode(`${prefix}.private.jwk.json`)).toBe(0o600);
    const pub = parsePublicJwk(JSON.parse(readFileSync(`${prefix}.public.jwk.json`, "utf8")));
    const signer = signerFromJwk(JSON.parse(readFileSync(`${prefix}.private.jwk.json`, "utf8")));
    expect(r.out).toBe(`${keyId(pub)}\n`);
    expect(signer.kid).toBe(keyId(pub));
    expect(pub.kty).toBe("OKP");
    expect(JSON.parse(readFileSync(`${prefix}.public.jwk.json`, "utf8"))).not.toHaveProperty("d");
    expect(r.err).toContain("mode 0600");
  });

  it("makes P-256 keys with --alg ES256 and reports both paths as JSON", async () => {
    const prefix = join(dir(), "merchant");
    const r = await runVerb(keysGroup, ["generate", "--alg", "ES256", "--out", prefix, "--output", "json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as Record<string, string>;
    expect(report).toMatchObject({ alg: "ES256", private_key_file: `${prefix}.private.jwk.json`, public_key_file: `${prefix}.public.jwk.json` });
    expect(parsePublicJwk(JSON.parse(readFileSync(`${prefix}.public.jwk.json`, "utf8"))).kty).toBe("EC");
  });

  it("refuses to overwrite either file without --force, and --force replaces them with mode 0600", async () => {
    const prefix = join(dir(), "p");
    writeFileSync(`${prefix}.public.jwk.json`, "old");
    const refused = await runVerb(keysGroup, ["generate", "--out", prefix]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`${prefix}.public.jwk.json already exists; pass --force`);
    expect(() => statSync(`${prefix}.private.jwk.json`)).toThrow();
    writeFileSync(`${prefix}.private.jwk.json`, "old");
    chmodSync(`${prefix}.private.jwk.json`, 0o644);
    const forced = await runVerb(keysGroup, ["generate", "--out", prefix, "--force"]);
    expect(forced.code).toBe(0);
    expect(mode(`${prefix}.private.jwk.json`)).toBe(0o600);
    expect(readFileSync(`${prefix}.public.jwk.json`, "utf8")).not.toBe("old");
  });

  it("--force replaces a symlink at the key path instead of writing through it", async () => {
    const d = dir();
    const target = join(d, "elsewhere.txt");
    writeFileSync(target, "do not touch");
    symlinkSync(target, join(d, "k.private.jwk.json"));
    const r = await runVerb(keysGroup, ["generate", "--out", join(d, "k"), "--force"]);
    expect(r.code).toBe(0);
    expect(readFileSync(target, "utf8")).toBe("do not touch");
    expect(lstatSync(join(d, "k.private.jwk.json")).isSymbolicLink()).toBe(false);
    expect(mode(join(d, "k.private.jwk.json"))).toBe(0o600);
  });

  it("bad usage exits 2: no --out, an unknown --alg", async () => {
    expect((await runVerb(keysGroup, ["generate"])).code).toBe(2);
    const r = await runVerb(keysGroup, ["generate", "--out", join(dir(), "x"), "--alg", "RS256"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--alg must be EdDSA or ES256");
  });
});
