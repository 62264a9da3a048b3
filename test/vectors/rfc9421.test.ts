/**
 * RFC 9421 Appendix B.2.6 (ed25519): the library Writ signs and checks with (http-message-signatures,
 * src/core/httpsig) builds the RFC's signature base, signs it to the RFC's exact signature
 * (Ed25519 is deterministic), and Writ's check accepts the RFC's signature and refuses it
 * once a covered field changes. Vector: ./rfc9421-ed25519.json (source and licence inside).
 */
import { createPrivateKey, createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { httpbis } from "http-message-signatures";
import { describe, expect, it } from "vitest";
import { checkSignature, signBytes } from "../../src/core/httpsig/index.js";
import { parsePublicJwk, signerFromJwk, verifySignatureBytes } from "../../src/core/jose/index.js";

const V = JSON.parse(readFileSync(new URL("./rfc9421-ed25519.json", import.meta.url), "utf8")) as {
  key: { keyid: string; private_pkcs8_pem: string; public_spki_pem: string };
  request: { method: string; url: string; headers: Record<string, string> };
  b26: { label: string; components: string[]; created: number; signature_base: string; signature_input: string; signature: string };
};
const privateJwk = createPrivateKey(V.key.private_pkcs8_pem).export({ format: "jwk" }) as Record<string, string>;
const publicJwk = parsePublicJwk(createPublicKey(V.key.public_spki_pem).export({ format: "jwk" }));
const signer = signerFromJwk(privateJwk);
const quoted = V.b26.components.map((c) => `"${c}"`);

describe("RFC 9421 Appendix B.2.6 (ed25519)", () => {
  it("builds the RFC's signature base", () => {
    const parts = httpbis.createSignatureBase({ fields: quoted }, V.request);
    const params = V.b26.signature_input.slice(`${V.b26.label}=`.length);
    parts.push(['"@signature-params"', [params]]);
    expect(httpbis.formatSignatureBase(parts)).toBe(V.b26.signature_base);
  });

  it("signs to the RFC's signature with Writ's signing primitive", async () => {
    const signed = await httpbis.signMessage(
      { key: { id: V.key.keyid, alg: "ed25519", sign: async (d) => signBytes(signer, d) }, name: V.b26.label, params: ["created", "keyid"], fields: V.b26.components, paramValues: { created: new Date(V.b26.created * 1000) } },
      V.request,
    );
    expect(signed.headers["Signature-Input"]).toBe(V.b26.signature_input);
    expect(signed.headers.Signature).toBe(V.b26.signature);
    expect(signBytes(signer, Buffer.from(V.b26.signature_base)).toString("base64")).toBe(V.b26.signature.slice(`${V.b26.label}=:`.length, -1));
  });

  it("verifies the RFC's signature, and refuses it over a changed field", async () => {
    const headers = { ...V.request.headers, "signature-input": V.b26.signature_input, signature: V.b26.signature };
    const ok = await httpbis.verifyMessage(
      { keyLookup: async () => ({ id: V.key.keyid, algs: ["ed25519"], verify: async (data, sig) => verifySignatureBytes(publicJwk, "EdDSA", data, sig) }), notAfter: V.b26.created + 1 },
      { ...V.request, headers },
    );
    expect(ok).toBe(true);
    // Writ's own check looks for the Web Bot Auth profile (tag web-bot-auth, with expires and nonce), which B.2.6 is not.
    const profile = await checkSignature({ request: { ...V.request, headers } }, { keyFor: () => publicJwk, jwkOf: (k) => k, nowMs: V.b26.created * 1000 });
    expect(profile).toMatchObject({ ok: false, code: "REQUEST_SIGNATURE_MISSING" });
    const tampered = await httpbis.verifyMessage(
      { keyLookup: async () => ({ id: V.key.keyid, algs: ["ed25519"], verify: async (data, sig) => verifySignatureBytes(publicJwk, "EdDSA", data, sig) }), notAfter: V.b26.created + 1 },
      { ...V.request, headers: { ...headers, "content-length": "19" } },
    );
    expect(tampered).toBe(false);
  });
});
