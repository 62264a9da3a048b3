/** `writ request sign`: prints the Web Bot Auth fields of a request, which Writ's check accepts (Ed25519 and P-256); bad usage exits 2. */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keysGroup } from "../../../../src/cli/keys/index.js";
import { requestGroup } from "../../../../src/cli/request/index.js";
import { checkSignature, webKeyId } from "../../../../src/core/httpsig/index.js";
import { parsePublicJwk } from "../../../../src/core/jose/index.js";
import { FIXED_NOW, runVerb } from "../capture.js";

async function agentKey(alg: "EdDSA" | "ES256"): Promise<{ file: string; pub: ReturnType<typeof parsePublicJwk> }> {
  const prefix = join(mkdtempSync(join(tmpdir(), "writ-request-")), "agent");
  expect((await runVerb(keysGroup, ["generate", "--alg", alg, "--out", prefix])).code).toBe(0);
  return { file: `${prefix}.private.jwk.json`, pub: parsePublicJwk(JSON.parse(readFileSync(`${prefix}.public.jwk.json`, "utf8"))) };
}

describe("writ request sign", () => {
  for (const alg of ["EdDSA", "ES256"] as const) {
    it(`prints Signature-Input, Signature and Signature-Agent that verify (${alg})`, async () => {
      const { file, pub } = await agentKey(alg);
      const url = "https://shop.example/orders?cart=7";
      const r = await runVerb(requestGroup, [
        "sign",
        "--key-file",
        file,
        "--server",
        "https://writ.example/",
        "--url",
        url,
        "--method",
        "post",
        "--header",
        "Content-Type: application/json",
        "--component",
        "content-type",
        "--component",
        "@method",
      ]);
      expect(r.code, r.err).toBe(0);
      const headers = Object.fromEntries(
        r.out
          .trim()
          .split("\n")
          .map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 2)]),
      );
      expect(headers["signature-agent"]).toBe('sig1="https://writ.example/.well-known/http-message-signatures-directory"');
      expect(headers["signature-input"]).toContain('("@authority" "content-type" "@method" "signature-agent")');
      const request = { method: "POST", url, headers: { ...headers, "content-type": "application/json" } };
      const keys = { keyFor: (kid: string) => (kid === webKeyId(pub) ? pub : undefined), jwkOf: (k: typeof pub) => k, nowMs: FIXED_NOW.getTime() };
      expect(await checkSignature({ request }, keys)).toMatchObject({
        ok: true,
        facts: { keyid: webKeyId(pub), created: FIXED_NOW.getTime() / 1000, expires: FIXED_NOW.getTime() / 1000 + 60 },
      });
      expect(await checkSignature({ request: { ...request, headers: { ...request.headers, "content-type": "text/plain" } } }, keys)).toMatchObject({
        ok: false,
        code: "REQUEST_SIGNATURE_INVALID",
      });
    });
  }

  it("prints JSON with --output json", async () => {
    const { file } = await agentKey("EdDSA");
    const r = await runVerb(requestGroup, [
      "sign",
      "--key-file",
      file,
      "--server",
      "http://127.0.0.1:8080",
      "--url",
      "https://shop.example/",
      "--output",
      "json",
      "--lifetime",
      "300",
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as Record<string, string>;
    expect(Object.keys(out)).toEqual(["Signature-Input", "Signature", "Signature-Agent"]);
    expect(out["Signature-Input"]).toContain(`expires=${FIXED_NOW.getTime() / 1000 + 300}`);
  });

  it("exits 2 on bad usage: a relative URL, a lifetime over 300, a bad header, no key file", async () => {
    const { file } = await agentKey("EdDSA");
    const base = ["sign", "--key-file", file, "--server", "https://writ.example"];
    expect((await runVerb(requestGroup, [...base, "--url", "/cart"])).code).toBe(2);
    expect((await runVerb(requestGroup, [...base, "--url", "https://shop.example/", "--lifetime", "301"])).code).toBe(2);
    expect((await runVerb(requestGroup, [...base, "--url", "https://shop.example/", "--header", "no colon"])).code).toBe(2);
    expect((await runVerb(requestGroup, ["sign", "--server", "https://writ.example", "--url", "https://shop.example/"])).code).toBe(2);
  });
});
