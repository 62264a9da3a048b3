import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import vec from "../../../vectors/rfc8037.json" with { type: "json" };
import {
  JoseError,
  generateSigner,
  keyId,
  lowS,
  parsePublicJwk,
  signJws,
  signerFromJwk,
  signerFromSeed,
  verifySignedRecord,
  type JwsObject,
  type PublicJwk,
} from "../../../../src/core/jose/index.js";
import { verifyJwsSignature } from "../../../../src/core/jose/jws.js";

const b64 = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "OK";
  } catch (e) {
    if (e instanceof JoseError) return e.code;
    throw e;
  }
}

describe("RFC 8037 vector", () => {
  it("derives the public key and thumbprint from the seed", () => {
    const s = signerFromSeed(vec.seed_hex);
    expect(s.publicJwk).toEqual(vec.public_jwk);
    expect(s.kid).toBe(`sha256:${Buffer.from(vec.jwk_thumbprint_rfc7638, "base64url").toString("hex")}`);
    expect(signerFromJwk(vec.private_jwk).kid).toBe(s.kid);
  });
  it("verifies the published signature", async () => {
    const [p, pl, sig] = vec.compact_jws.split(".") as [string, string, string];
    // The vector's payload is text, not a record: the signature primitive alone checks it.
    expect(await verifyJwsSignature({ protected: p, payload: pl, signature: sig }, parsePublicJwk(vec.public_jwk), "EdDSA")).toBe(true);
    expect(Buffer.from(pl, "base64url").toString()).toBe(vec.payload_utf8);
  });
  it("produces the published signature (Ed25519 is deterministic)", async () => {
    const s = signerFromSeed(vec.seed_hex);
    // Re-sign the vector's exact signing input through node's primitive to show the key is the vector's key.
    const { sign } = await import("node:crypto");
    expect(sign(null, Buffer.from(vec.signing_input), s.privateKey).toString("base64url")).toBe(vec.signature_b64url);
  });
});

describe("public JWKs", () => {
  it("refuses private members and foreign key types", () => {
    expect(() => parsePublicJwk(vec.private_jwk)).toThrow(/private member "d"/);
    expect(() => parsePublicJwk({ kty: "RSA", n: "AQAB", e: "AQAB" })).toThrow(JoseError);
    expect(() => parsePublicJwk({ kty: "oct", k: "c2VjcmV0" })).toThrow(JoseError);
    expect(() => parsePublicJwk({ kty: "OKP", crv: "X25519", x: vec.public_jwk.x })).toThrow(JoseError);
    expect(() => parsePublicJwk({ kty: "OKP", crv: "Ed25519", x: "AAAA" })).toThrow(/32 bytes/);
    expect(() => parsePublicJwk({ ...vec.public_jwk, alg: "ES256" })).toThrow(/does not fit/);
    expect(() => parsePublicJwk("nope")).toThrow(JoseError);
  });
  it("accepts P-256 and refuses a point off the curve", () => {
    const s = generateSigner("ES256");
    expect(parsePublicJwk(s.publicJwk)).toEqual(s.publicJwk);
    const p = s.publicJwk as Extract<PublicJwk, { kty: "EC" }>;
    const badY = Buffer.from(p.y, "base64url");
    badY[0] = (badY[0] ?? 0) ^ 1;
    expect(() => parsePublicJwk({ ...p, y: badY.toString("base64url") })).toThrow(/curve/);
  });
  it("kid is the hex RFC 7638 thumbprint", () => {
    expect(keyId(parsePublicJwk(vec.public_jwk))).toBe("sha256:90facafea9b1556698540f70c0117a22ea37bd5cf3ed3c47093c1707282b4b89");
  });
});

describe("JWS verification", () => {
  const ed = signerFromSeed(vec.seed_hex);
  const other = generateSigner("EdDSA");
  const p256 = generateSigner("ES256");

  it("round-trips EdDSA and ES256 with typ and kid", async () => {
    for (const s of [ed, p256]) {
      const jws = await signJws('{"a":1}', s, "svc-test+jws");
      expect(Object.keys(jws).sort()).toEqual(["payload", "protected", "signature"]);
      const r = await verifySignedRecord(jws, s.publicJwk, { typ: "svc-test+jws", record: { a: 1 } });
      expect(r.header).toMatchObject({ alg: s.alg, kid: s.kid, typ: "svc-test+jws" });
    }
  });
  it("rejects alg none", async () => {
    const jws = { protected: b64({ alg: "none" }), payload: b64("{}"), signature: "" };
    expect(await code(verifySignedRecord(jws, ed.publicJwk, { typ: "t" }))).toBe("JWS_ALG_NOT_ALLOWED");
  });
  it("rejects HS256 keyed with the public key", async () => {
    const prot = b64({ alg: "HS256" });
    const pl = b64("{}");
    for (const secret of [Buffer.from(ed.publicJwk.x, "base64url"), Buffer.from(JSON.stringify(ed.publicJwk))]) {
      const sig = createHmac("sha256", secret).update(`${prot}.${pl}`).digest("base64url");
      expect(await code(verifySignedRecord({ protected: prot, payload: pl, signature: sig }, ed.publicJwk, { typ: "t" }))).toBe("JWS_ALG_NOT_ALLOWED");
    }
  });
  it("rejects an alg that does not fit the key", async () => {
    const { FlattenedSign } = await import("jose");
    // The kid names the Ed25519 key, the alg is ES256 (signed by a P-256 key).
    const signed = await new FlattenedSign(Buffer.from("{}")).setProtectedHeader({ alg: "ES256", typ: "t", kid: ed.kid }).sign(p256.privateKey);
    // In its low-S form, as Writ signs (both halves verify: canonical-forms.test.ts).
    const jws = { ...signed, signature: lowS("ES256", Buffer.from(signed.signature, "base64url")).toString("base64url") };
    expect(await code(verifySignedRecord(jws as JwsObject, ed.publicJwk, { typ: "t" }))).toBe("JWS_ALG_NOT_ALLOWED");
  });
  it("rejects a wrong or missing typ", async () => {
    const jws = await signJws("{}", ed, "svc-tree-head+jws");
    expect(await code(verifySignedRecord(jws, ed.publicJwk, { typ: "svc-revocation-push+jws" }))).toBe("JWS_TYP_MISMATCH");
    const untyped = await signJws("{}", ed);
    expect(await code(verifySignedRecord(untyped, ed.publicJwk, { typ: "svc-tree-head+jws" }))).toBe("JWS_TYP_MISMATCH");
  });
  it("rejects a tampered payload or header", async () => {
    const jws = await signJws('{"amount":10}', ed, "t");
    expect(await code(verifySignedRecord({ ...jws, payload: b64('{"amount":99}') }, ed.publicJwk, { typ: "t" }))).toBe("JWS_SIGNATURE_INVALID");
    const hdr = JSON.parse(Buffer.from(jws.protected, "base64url").toString());
    const forged = { ...jws, protected: b64({ ...hdr, note: "x" }) };
    expect(await code(verifySignedRecord(forged, ed.publicJwk, { typ: "t" }))).toBe("JWS_SIGNATURE_INVALID");
    const sig = Buffer.from(jws.signature, "base64url");
    sig[5] = (sig[5] ?? 0) ^ 0x40;
    expect(await code(verifySignedRecord({ ...jws, signature: sig.toString("base64url") }, ed.publicJwk, { typ: "t" }))).toBe("JWS_SIGNATURE_INVALID");
  });
  it("rejects a payload other than the expected record", async () => {
    const jws = await signJws('{"a":1}', ed, "t");
    expect(await code(verifySignedRecord(jws, ed.publicJwk, { typ: "t", record: { a: 2 } }))).toBe("JWS_PAYLOAD_MISMATCH");
  });
  it("rejects unknown crit members", async () => {
    const { FlattenedSign } = await import("jose");
    const jws = await new FlattenedSign(Buffer.from("{}"))
      .setProtectedHeader({ alg: "EdDSA", typ: "t", crit: ["exp"], exp: 1 })
      .sign(ed.privateKey, { crit: { exp: true } });
    expect(await code(verifySignedRecord(jws as JwsObject, ed.publicJwk, { typ: "t" }))).toBe("JWS_CRIT_UNSUPPORTED");
  });
  it("never takes the key from an embedded jwk header", async () => {
    const { FlattenedSign } = await import("jose");
    // An attacker signs with their own key and embeds it: verifying with the real key must fail,
    // and the header itself is refused.
    const jws = await new FlattenedSign(Buffer.from("{}")).setProtectedHeader({ alg: "EdDSA", typ: "t", jwk: other.publicJwk }).sign(other.privateKey);
    expect(await code(verifySignedRecord(jws as JwsObject, ed.publicJwk, { typ: "t" }))).toBe("JWS_HEADER_NOT_ALLOWED");
  });
  it("rejects a signature by a different key", async () => {
    const jws = await signJws("{}", other, "t");
    expect(await code(verifySignedRecord(jws, ed.publicJwk, { typ: "t" }))).toBe("JWS_KID_MISMATCH");
    const { FlattenedSign } = await import("jose");
    const noKid = await new FlattenedSign(Buffer.from("{}")).setProtectedHeader({ alg: "EdDSA", typ: "t" }).sign(other.privateKey);
    expect(await code(verifySignedRecord(noKid as JwsObject, ed.publicJwk, { typ: "t" }))).toBe("JWS_SIGNATURE_INVALID");
  });
  it("rejects malformed JWS objects", async () => {
    const jws = await signJws("{}", ed, "t");
    expect(await code(verifySignedRecord({ ...jws, header: { kid: "x" } }, ed.publicJwk, { typ: "t" }))).toBe("JWS_MALFORMED");
    expect(await code(verifySignedRecord({ protected: jws.protected, payload: jws.payload }, ed.publicJwk, { typ: "t" }))).toBe("JWS_MALFORMED");
    expect(await code(verifySignedRecord(`${jws.protected}.${jws.payload}.${jws.signature}`, ed.publicJwk, { typ: "t" }))).toBe("JWS_MALFORMED");
    expect(await code(verifySignedRecord({ ...jws, protected: b64("not json{") }, ed.publicJwk, { typ: "t" }))).toBe("JWS_MALFORMED");
    expect(await code(verifySignedRecord({ ...jws, payload: "a+b/" }, ed.publicJwk, { typ: "t" }))).toBe("JWS_MALFORMED");
  });
});
