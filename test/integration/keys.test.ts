import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { generateSigner, keyId, signerFromSeed } from "../../src/core/jose/index.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import vectors from "../vectors/rfc8037.json" with { type: "json" };

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function keyList(env: Record<string, string>) {
  const s = await startTestServer(env);
  servers.push(s);
  const r = await fetch(`${s.url}/.well-known/svc-keys.json`);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe("GET /.well-known/svc-keys.json", () => {
  it("is 200 with an empty list when no seed is set", async () => {
    expect(await keyList({})).toEqual({ status: 200, body: { keys: [] } });
  });

  it("publishes the log public key with kid = sha256: RFC 7638 thumbprint hex", async () => {
    const r = await keyList({ SVC_LOG_SIGNING_SEED: vectors.seed_hex });
    const thumbprintHex = Buffer.from(vectors.jwk_thumbprint_rfc7638, "base64url").toString("hex");
    // The key ID of a signed-note verifier key: SHA-256(origin || 0x0A || 0x01 || raw key)[:4].
    const raw = Buffer.from(vectors.public_jwk.x, "base64url");
    const noteKeyId = createHash("sha256").update("writ.local/log\n\u0001").update(raw).digest().subarray(0, 4).toString("hex");
    expect(r).toEqual({
      status: 200,
      body: {
        keys: [
          {
            public_key: { crv: "Ed25519", kid: `sha256:${thumbprintHex}`, kty: "OKP", x: vectors.public_jwk.x },
            checkpoint_origin: "writ.local/log",
            note_verifier_key: `writ.local/log+${noteKeyId}+${Buffer.concat([Buffer.from([1]), raw]).toString("base64")}`,
          },
        ],
      },
    });
  });

  it("accepts the seed as 43 characters of base64url", async () => {
    const b64 = Buffer.from(vectors.seed_hex, "hex").toString("base64url");
    const r = await keyList({ SVC_LOG_SIGNING_SEED: b64 });
    expect((r.body.keys as { public_key: { x: string } }[])[0]?.public_key.x).toBe(vectors.public_jwk.x);
  });

  it("appends the records of SVC_PUBLISHED_KEYS after the log key, extra members kept", async () => {
    const ed = generateSigner();
    const ec = generateSigner("ES256");
    const records = [{ public_key: ed.publicJwk, domain: "bank.example" }, { public_key: { ...ec.publicJwk, kid: keyId(ec.publicJwk) } }];
    const r = await keyList({ SVC_LOG_SIGNING_SEED: vectors.seed_hex, SVC_PUBLISHED_KEYS: JSON.stringify(records) });
    expect(r.status).toBe(200);
    const keys = r.body.keys as { public_key: Record<string, string>; domain?: string }[];
    expect(keys).toHaveLength(3);
    expect(keys[0]?.public_key.kid).toBe(signerFromSeed(vectors.seed_hex).kid);
    expect(keys[1]).toEqual({ public_key: { ...ed.publicJwk, kid: ed.kid }, domain: "bank.example" });
    expect(keys[2]).toEqual({ public_key: { ...ec.publicJwk, kid: ec.kid } });
  });

  it("publishes the records even without a seed", async () => {
    const ed = generateSigner();
    const r = await keyList({ SVC_PUBLISHED_KEYS: JSON.stringify([{ public_key: ed.publicJwk }]) });
    expect(r).toEqual({ status: 200, body: { keys: [{ public_key: { ...ed.publicJwk, kid: ed.kid } }] } });
  });

  const failing: [string, Record<string, string>, string][] = [
    ["a seed of the wrong length", { SVC_LOG_SIGNING_SEED: "abcd" }, "SVC_LOG_SIGNING_SEED failed to load"],
    ["a seed that is not hex or base64url", { SVC_LOG_SIGNING_SEED: "z".repeat(64) }, "SVC_LOG_SIGNING_SEED failed to load"],
    ["published keys that are not JSON", { SVC_PUBLISHED_KEYS: "[{" }, "SVC_PUBLISHED_KEYS failed to load"],
    ["published keys that are not an array", { SVC_PUBLISHED_KEYS: '{"public_key":{}}' }, "SVC_PUBLISHED_KEYS failed to load"],
    [
      "a published key with a private member",
      { SVC_PUBLISHED_KEYS: JSON.stringify([{ public_key: { ...vectors.public_jwk, d: "x" } }]) },
      "SVC_PUBLISHED_KEYS failed to load",
    ],
    [
      "a published key whose kid does not match",
      { SVC_PUBLISHED_KEYS: JSON.stringify([{ public_key: { ...vectors.public_jwk, kid: "sha256:" + "0".repeat(64) } }]) },
      "SVC_PUBLISHED_KEYS failed to load",
    ],
    [
      "a published RSA key",
      { SVC_PUBLISHED_KEYS: JSON.stringify([{ public_key: { kty: "RSA", n: "AQAB", e: "AQAB" } }]) },
      "SVC_PUBLISHED_KEYS failed to load",
    ],
  ];
  for (const [name, env, error] of failing) {
    it(`is 500 {error} for ${name}, without echoing the value`, async () => {
      const r = await keyList({ SVC_LOG_SIGNING_SEED: vectors.seed_hex, ...env });
      expect(r).toEqual({ status: 500, body: { error } });
    });
  }
});
