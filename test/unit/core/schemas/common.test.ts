import { describe, expect, it } from "vitest";
import { signerFromSeed } from "../../../../src/core/jose/index.js";
import { validate } from "../../../../src/core/schemas/index.js";
import rfc8037 from "../../../vectors/rfc8037.json" with { type: "json" };

const okp = { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" };
const ec = {
  kty: "EC",
  crv: "P-256",
  x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
  y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
};

describe("JWS object", () => {
  const good = { protected: "eyJhbGciOiJFZERTQSJ9", payload: "", signature: "c2ln" };

  it("accepts protected, payload and signature (payload may be empty)", () => {
    expect(validate("jws", good).ok).toBe(true);
  });

  it("refuses any other member, a missing member and non-base64url text", () => {
    expect(validate("jws", { ...good, header: {} })).toEqual({
      ok: false,
      errors: ["/: must not have additional property 'header'"],
    });
    expect(validate("jws", { protected: "a", payload: "b" })).toEqual({
      ok: false,
      errors: ["/: must have required property 'signature'"],
    });
    expect(validate("jws", { ...good, signature: "a.b" })).toEqual({
      ok: false,
      errors: ["/signature: must match pattern ^[A-Za-z0-9_-]+$"],
    });
    expect(validate("jws", "a.b.c")).toEqual({ ok: false, errors: ["/: must be an object"] });
  });
});

describe("public JWK", () => {
  it("accepts Ed25519 and P-256 public keys, with optional metadata", () => {
    expect(validate("public-jwk", okp).ok).toBe(true);
    expect(validate("public-jwk", { ...ec, kid: "sha256:" + "0".repeat(64), alg: "ES256", use: "sig" }).ok).toBe(true);
    expect(validate("public-jwk", rfc8037.public_jwk).ok).toBe(true);
  });

  it("accepts the public key of a Writ signer", () => {
    expect(validate("public-jwk", signerFromSeed(rfc8037.seed_hex).publicJwk).ok).toBe(true);
  });

  it("refuses a key carrying the private member d", () => {
    const r = validate("public-jwk", { ...okp, d: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A" });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors).toContain("/: must not have property 'd'");
  });

  it("refuses other key types, and curves or algorithms that do not fit the key type", () => {
    expect(validate("public-jwk", { kty: "RSA", n: "x", e: "AQAB" })).toEqual({
      ok: false,
      errors: ["/kty: must be one of: OKP, EC"],
    });
    expect(validate("public-jwk", { ...okp, crv: "P-256" })).toEqual({
      ok: false,
      errors: ['/crv: must equal "Ed25519"'],
    });
    expect(validate("public-jwk", { ...okp, alg: "ES256" })).toEqual({
      ok: false,
      errors: ['/alg: must equal "EdDSA"'],
    });
    expect(validate("public-jwk", { kty: "EC", crv: "P-256", x: ec.x })).toEqual({
      ok: false,
      errors: ["/: must have required property 'y'"],
    });
  });

  it("requires 32-byte base64url coordinates", () => {
    expect(validate("public-jwk", { ...okp, x: okp.x.slice(1) })).toEqual({
      ok: false,
      errors: ["/x: must match pattern ^[A-Za-z0-9_-]{43}$"],
    });
  });
});

describe("actor", () => {
  it("requires a known role and a non-empty id, nothing else", () => {
    expect(validate("actor", { role: "psp", id: "psp_1" }).ok).toBe(true);
    expect(validate("actor", { role: "psp", id: "", via: "x" })).toEqual({
      ok: false,
      errors: ["/: must not have additional property 'via'", "/id: must not be empty"],
    });
  });
});
