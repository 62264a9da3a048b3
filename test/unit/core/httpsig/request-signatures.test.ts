/**
 * Agents' request signatures (src/core/httpsig) and the offline check of writ/client: a request
 * Writ signs verifies; each way it can be wrong is refused with its reason; the key directory's
 * signature is checked; and the independent implementation (Cloudflare's web-bot-auth, over its
 * own http-message-sig) verifies what Writ signs, and Writ verifies what it signs (Ed25519, and
 * P-256 through its generic signer and verifier hooks).
 */
import { createPublicKey, generateKeyPairSync, sign as nodeSign, verify as nodeVerify } from "node:crypto";
import { signatureHeaders as wbaSign, verify as wbaVerify, jwkToKeyID } from "web-bot-auth";
import { Ed25519Signer, verifierFromJWK } from "web-bot-auth/crypto";
import { describe, expect, it } from "vitest";
import {
  DIRECTORY_PATH,
  MAX_LIFETIME_SECONDS,
  checkSignature,
  directoryKey,
  signDirectory,
  signRequest,
  verifyDirectory,
  webKeyId,
  type HttpRequestLike,
  type KeyDirectory,
} from "../../../../src/core/httpsig/index.js";
import { generateSigner, privateJwk, type PublicJwk, type Signer } from "../../../../src/core/jose/index.js";
import { KeyDirectoryCache, MemoryNonceStore, signAgentRequest, verifyAgentRequest } from "../../../../src/client/index.js";

const WRIT = "https://writ.example";
const DIRECTORY_URL = `${WRIT}${DIRECTORY_PATH}`;
const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const request: HttpRequestLike = { method: "POST", url: "https://shop.example/orders?cart=7", headers: { "content-type": "application/json" } };

function p256Signer(): Signer {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const pub = createPublicKey(privateKey).export({ format: "jwk" }) as Record<string, string>;
  const publicJwk = { kty: "EC", crv: "P-256", x: pub.x, y: pub.y } as PublicJwk;
  return { alg: "ES256", kid: "sha256:0" as Signer["kid"], publicJwk, privateKey };
}

async function signed(signer: Signer, over: Partial<Parameters<typeof signRequest>[1]> = {}, req = request): Promise<HttpRequestLike> {
  const fields = await signRequest(req, { signer, directoryUrl: DIRECTORY_URL, created: new Date(NOW), components: ["@method", "@path"], ...over });
  return { ...req, headers: { ...req.headers, ...fields } };
}

const keyring = (...signers: Signer[]) => ({
  keyFor: (kid: string) => signers.find((s) => webKeyId(s.publicJwk) === kid)?.publicJwk,
  jwkOf: (k: PublicJwk) => k,
  nowMs: NOW,
});

describe("signing and checking a request (Ed25519 and P-256)", () => {
  for (const [name, make] of [
    ["Ed25519", () => generateSigner()],
    ["P-256", p256Signer],
  ] as const) {
    it(`${name}: the signature carries the Web Bot Auth parameters and verifies`, async () => {
      const agent = make();
      const r = await signed(agent);
      expect(r.headers["signature-agent"]).toBe(`sig1="${DIRECTORY_URL}"`);
      expect(r.headers["signature-input"]).toMatch(
        /^sig1=\("@authority" "@method" "@path" "signature-agent"\);created=\d+;expires=\d+;keyid="[A-Za-z0-9_-]{43}";alg="(ed25519|ecdsa-p256-sha256)";nonce="[A-Za-z0-9+/]{86}==";tag="web-bot-auth"$/,
      );
      const check = await checkSignature({ request: r }, keyring(agent));
      expect(check).toMatchObject({
        ok: true,
        facts: { keyid: webKeyId(agent.publicJwk), tag: "web-bot-auth", created: NOW / 1000, expires: NOW / 1000 + 60 },
      });
    });
  }

  it("refuses a tampered component (REQUEST_SIGNATURE_INVALID)", async () => {
    const agent = generateSigner();
    const r = await signed(agent);
    for (const changed of [
      { ...r, method: "GET" },
      { ...r, url: "https://shop.example/refunds?cart=7" },
      { ...r, url: "https://evil.example/orders?cart=7" },
      { ...r, headers: { ...r.headers, "signature-agent": 'sig1="https://other.example/.well-known/http-message-signatures-directory"' } },
    ]) {
      expect(await checkSignature({ request: changed }, keyring(agent))).toMatchObject({ ok: false, code: "REQUEST_SIGNATURE_INVALID" });
    }
  });

  it("refuses a signature by another key than its keyid's (REQUEST_SIGNATURE_INVALID) and an unknown keyid (REQUEST_KEY_UNKNOWN)", async () => {
    const agent = generateSigner();
    const other = generateSigner();
    const r = await signed(agent);
    // The directory maps the agent's keyid to another key: the signature does not verify with it.
    const wrong = { keyFor: () => other.publicJwk, jwkOf: (k: PublicJwk) => k, nowMs: NOW };
    expect(await checkSignature({ request: r }, wrong)).toMatchObject({ ok: false, code: "REQUEST_SIGNATURE_INVALID" });
    expect(await checkSignature({ request: r }, keyring(other))).toMatchObject({ ok: false, code: "REQUEST_KEY_UNKNOWN" });
  });

  it("refuses an expired signature (REQUEST_SIGNATURE_EXPIRED), and accepts it within the clock skew", async () => {
    const agent = generateSigner();
    const r = await signed(agent, { lifetimeSeconds: 60 });
    expect((await checkSignature({ request: r }, { ...keyring(agent), nowMs: NOW + 89_000 })).ok).toBe(true);
    expect(await checkSignature({ request: r }, { ...keyring(agent), nowMs: NOW + 91_000 })).toMatchObject({ ok: false, code: "REQUEST_SIGNATURE_EXPIRED" });
  });

  it("refuses what the profile forbids (REQUEST_SIGNATURE_MALFORMED / MISSING)", async () => {
    const agent = generateSigner();
    const tooLong = await signed(agent, { lifetimeSeconds: MAX_LIFETIME_SECONDS + 1 });
    expect(await checkSignature({ request: tooLong }, keyring(agent))).toMatchObject({ ok: false, code: "REQUEST_SIGNATURE_MALFORMED" });
    const future = await signed(agent, { created: new Date(NOW + 120_000) });
    expect(await checkSignature({ request: future }, keyring(agent))).toMatchObject({ ok: false, code: "REQUEST_SIGNATURE_MALFORMED" });
    const r = await signed(agent);
    const noNonce = { ...r, headers: { ...r.headers, "signature-input": String(r.headers["signature-input"]).replace(/;nonce="[^"]*"/, "") } };
    expect(await checkSignature({ request: noNonce }, keyring(agent))).toMatchObject({
      ok: false,
      code: "REQUEST_SIGNATURE_MALFORMED",
      message: expect.stringContaining("nonce"),
    });
    // A Signature-Agent added after signing is not covered.
    const unsignedAgent = await signRequest(request, { signer: agent, created: new Date(NOW) });
    const added = { ...request, headers: { ...request.headers, ...unsignedAgent, "signature-agent": `sig1="${DIRECTORY_URL}"` } };
    expect(await checkSignature({ request: added }, keyring(agent))).toMatchObject({ ok: false, code: "REQUEST_SIGNATURE_MALFORMED" });
    expect(await checkSignature({ request }, keyring(agent))).toMatchObject({ ok: false, code: "REQUEST_SIGNATURE_MISSING" });
  });
});

describe("the key directory", () => {
  const writ = generateSigner();
  const agent = generateSigner();
  const body = JSON.stringify({ keys: [directoryKey({ agent_id: "agent_a", org_id: "org_op", public_key: agent.publicJwk })] });

  it("verifies with Writ's log key, and refuses a bad signature, another key, a changed body or an expired copy (KEY_DIRECTORY_INVALID)", async () => {
    const headers = await signDirectory(body, { url: DIRECTORY_URL, signer: writ, now: new Date(NOW) });
    expect(headers["signature-input"]).toContain('("@authority";req "content-digest")');
    expect(headers["signature-input"]).toContain('tag="http-message-signatures-directory"');
    const ok = await verifyDirectory({ url: DIRECTORY_URL, headers, body }, { writKey: writ.publicJwk, nowMs: NOW });
    expect(ok).toMatchObject({ ok: true, directory: { keys: [{ kid: webKeyId(agent.publicJwk), agent_id: "agent_a", operator_org_id: "org_op" }] } });
    const flipped = headers.signature.replace(/:(.)/, (_m, c: string) => `:${c === "A" ? "B" : "A"}`);
    const cases: Array<[string, Parameters<typeof verifyDirectory>[0], number, PublicJwk]> = [
      ["bad signature", { url: DIRECTORY_URL, headers: { ...headers, signature: flipped }, body }, NOW, writ.publicJwk],
      ["another key", { url: DIRECTORY_URL, headers, body }, NOW, generateSigner().publicJwk],
      ["changed body", { url: DIRECTORY_URL, headers, body: body.replace("agent_a", "agent_b") }, NOW, writ.publicJwk],
      [
        "changed body and digest",
        {
          url: DIRECTORY_URL,
          headers: {
            ...headers,
            "content-digest": (await signDirectory(body.replace("agent_a", "agent_b"), { url: DIRECTORY_URL, signer: writ, now: new Date(NOW) }))[
              "content-digest"
            ],
          },
          body: body.replace("agent_a", "agent_b"),
        },
        NOW,
        writ.publicJwk,
      ],
      ["another authority", { url: `https://evil.example${DIRECTORY_PATH}`, headers, body }, NOW, writ.publicJwk],
      ["expired", { url: DIRECTORY_URL, headers, body }, NOW + 400_000, writ.publicJwk],
    ];
    for (const [what, answer, nowMs, key] of cases) {
      expect(await verifyDirectory(answer, { writKey: key, nowMs }), what).toMatchObject({ ok: false, code: "KEY_DIRECTORY_INVALID" });
    }
  });

  it("writ/client: a merchant checks offline with a cached directory, refuses a replay, and refuses a directory with a bad signature", async () => {
    let served = 0;
    let tamper = false;
    const fetchDirectory = async (r: Request): Promise<Response> => {
      served += 1;
      expect(r.url).toBe(DIRECTORY_URL);
      const headers = await signDirectory(body, { url: DIRECTORY_URL, signer: writ, now: new Date(NOW) });
      return new Response(body, {
        headers: { ...headers, ...(tamper ? { signature: headers.signature.replace(/:(.)/, (_m, c: string) => `:${c === "A" ? "B" : "A"}`) } : {}) },
      });
    };
    const directory = new KeyDirectoryCache({ server: WRIT, writKey: writ.publicJwk, fetch: fetchDirectory, now: () => NOW });
    const nonces = new MemoryNonceStore(1000, () => NOW);
    const fields = await signAgentRequest(request, { key: privateJwk(agent), server: WRIT, created: new Date(NOW) });
    const r = { ...request, headers: { ...request.headers, ...fields } };
    expect(await verifyAgentRequest(r, { directory, nonces, nowMs: NOW })).toMatchObject({
      verified: true,
      agent: { agent_id: "agent_a", operator_org_id: "org_op" },
    });
    expect(await verifyAgentRequest(r, { directory, nonces, nowMs: NOW })).toMatchObject({ verified: false, reason: "REQUEST_NONCE_REPLAYED" });
    expect(served).toBe(1);
    // A fresh cache over an answer whose signature was changed: refused, no key trusted.
    tamper = true;
    const bad = new KeyDirectoryCache({ server: WRIT, writKey: writ.publicJwk, fetch: fetchDirectory, now: () => NOW });
    const again = {
      ...request,
      headers: { ...request.headers, ...(await signAgentRequest(request, { key: privateJwk(agent), server: WRIT, created: new Date(NOW) })) },
    };
    expect(await verifyAgentRequest(again, { directory: bad, nowMs: NOW })).toMatchObject({ verified: false, reason: "KEY_DIRECTORY_INVALID" });
  });

  it("writ/client: an agent no longer in the directory is refused once the cached copy expires", async () => {
    let listed = true;
    const fetchDirectory = async (): Promise<Response> => {
      const b = listed ? body : JSON.stringify({ keys: [] });
      return new Response(b, { headers: await signDirectory(b, { url: DIRECTORY_URL, signer: writ, now: new Date(clock) }) });
    };
    let clock = NOW;
    const directory = new KeyDirectoryCache({ server: WRIT, writKey: writ.publicJwk, fetch: fetchDirectory, now: () => clock });
    const sign = async () => ({
      ...request,
      headers: { ...request.headers, ...(await signAgentRequest(request, { key: privateJwk(agent), server: WRIT, created: new Date(clock) })) },
    });
    expect((await verifyAgentRequest(await sign(), { directory, nowMs: clock })).verified).toBe(true);
    listed = false; // suspended: Writ's directory drops it
    clock = NOW + 301_000;
    expect(await verifyAgentRequest(await sign(), { directory, nowMs: clock })).toMatchObject({ verified: false, reason: "REQUEST_KEY_UNKNOWN" });
  });
});

describe("interop with an independent implementation (web-bot-auth over http-message-sig)", () => {
  it("Ed25519: web-bot-auth verifies what Writ signs, with the same keyid", async () => {
    const agent = generateSigner();
    const now = Date.now();
    const fields = await signRequest(request, { signer: agent, directoryUrl: DIRECTORY_URL, created: new Date(now), components: ["@method", "@path"] });
    const r = new Request(request.url, { method: request.method, headers: { ...(request.headers as Record<string, string>), ...fields } });
    const seen: string[] = [];
    const verifier = await verifierFromJWK(agent.publicJwk as never);
    await wbaVerify(r, async (data, sig, params) => {
      seen.push(params.keyid);
      await verifier(data, sig, params);
    });
    expect(seen).toEqual([webKeyId(agent.publicJwk)]);
    const theirKid = await jwkToKeyID(
      agent.publicJwk as never,
      (b: Uint8Array) => crypto.subtle.digest("SHA-256", b),
      (u: ArrayBuffer) => Buffer.from(u).toString("base64url"),
    );
    expect(theirKid).toBe(webKeyId(agent.publicJwk));
    // A tampered request fails there too.
    await expect(wbaVerify(new Request("https://shop.example/refunds?cart=7", { method: "POST", headers: r.headers }), verifier)).rejects.toThrow();
  });

  it("Ed25519: Writ verifies what web-bot-auth signs", async () => {
    const { privateKey } = generateKeyPairSync("ed25519");
    const jwk = privateKey.export({ format: "jwk" }) as Record<string, string>;
    const theirs = await Ed25519Signer.fromJWK(jwk as never);
    const now = new Date();
    const req = new Request("https://shop.example/a", { headers: { "signature-agent": `sig1="${DIRECTORY_URL}"` } });
    const h = await wbaSign(req, theirs, { created: now, expires: new Date(now.getTime() + 60_000) });
    const pub = { kty: "OKP", crv: "Ed25519", x: jwk.x } as PublicJwk;
    const r: HttpRequestLike = {
      method: "GET",
      url: req.url,
      headers: { "signature-agent": `sig1="${DIRECTORY_URL}"`, signature: h.Signature, "signature-input": h["Signature-Input"] },
    };
    const check = await checkSignature({ request: r }, { keyFor: (kid) => (kid === webKeyId(pub) ? pub : undefined), jwkOf: (k) => k, nowMs: now.getTime() });
    expect(check).toMatchObject({ ok: true, facts: { keyid: theirs.keyid, tag: "web-bot-auth" } });
    const tampered = { ...r, url: "https://evil.example/a" };
    expect(await checkSignature({ request: tampered }, { keyFor: () => pub, jwkOf: (k) => k, nowMs: now.getTime() })).toMatchObject({
      ok: false,
      code: "REQUEST_SIGNATURE_INVALID",
    });
  });

  it("P-256: http-message-sig verifies what Writ signs, and Writ verifies what it signs (ecdsa-p256-sha256)", async () => {
    const agent = p256Signer();
    const now = Date.now();
    const fields = await signRequest(request, { signer: agent, directoryUrl: DIRECTORY_URL, created: new Date(now), components: ["@method", "@path"] });
    const r = new Request(request.url, { method: request.method, headers: { ...(request.headers as Record<string, string>), ...fields } });
    let verified = false;
    await wbaVerify(r, (data, sig) => {
      verified = nodeVerify(
        "sha256",
        Buffer.from(data),
        { key: createPublicKey({ key: agent.publicJwk as never, format: "jwk" }), dsaEncoding: "ieee-p1363" },
        sig,
      );
    });
    expect(verified).toBe(true);

    // The reverse: their signing (base and parameters), a P-256 key's signature (either S form).
    const keyid = webKeyId(agent.publicJwk);
    const theirs = {
      alg: "ecdsa-p256-sha256" as const,
      keyid,
      sign: (data: string) => new Uint8Array(nodeSign("sha256", Buffer.from(data), { key: agent.privateKey, dsaEncoding: "ieee-p1363" })),
    };
    const req = new Request("https://shop.example/a", { headers: { "signature-agent": `sig1="${DIRECTORY_URL}"` } });
    const h = await wbaSign(req, theirs, { created: new Date(now), expires: new Date(now + 60_000) });
    const mine: HttpRequestLike = {
      method: "GET",
      url: req.url,
      headers: { "signature-agent": `sig1="${DIRECTORY_URL}"`, signature: h.Signature, "signature-input": h["Signature-Input"] },
    };
    expect(await checkSignature({ request: mine }, { ...keyring(agent), nowMs: now })).toMatchObject({ ok: true, facts: { keyid, alg: "ecdsa-p256-sha256" } });
  });
});

describe("a directory is what it says (types)", () => {
  it("each kid is its key's thumbprint", () => {
    const d: KeyDirectory = { keys: [directoryKey({ agent_id: "a", org_id: "o", public_key: generateSigner().publicJwk })] };
    expect(d.keys[0]?.kid).toBe(webKeyId(d.keys[0] as PublicJwk));
  });
});
