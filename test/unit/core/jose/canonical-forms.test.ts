/**
 * One spelling per key and per signature (src/core/jose/canonical-forms.ts): non-canonical
 * base64url, an EdDSA S >= L and the small-order Ed25519 keys are refused by the one signature
 * primitive and by every key import; the ES256 high-S twin verifies and hashes as its low-S form.
 */
import { createPublicKey, verify } from "node:crypto";
import { hashOf } from "../../../../src/core/canonical/index.js";
import { describe, expect, it } from "vitest";
import { ED25519_SMALL_ORDER_Y, P256_ORDER } from "../../../../src/core/jose/canonical-forms.js";
import {
  JoseError,
  generateSigner,
  isCanonicalBase64url,
  keyEncodingProblem,
  lowS,
  lowSJws,
  lowSSignatureText,
  parsePublicJwk,
  publicKeyObject,
  signJws,
  signJwsInput,
  signRecord,
  verifyJwsInput,
  verifySignatureBytes,
  verifySignedRecord,
  withLowSSignature,
  type JwsObject,
  type PublicJwk,
} from "../../../../src/core/jose/index.js";
import { verifyJwsSignature } from "../../../../src/core/jose/jws.js";
import { noteKeyHash, openNote } from "../../../../src/core/tlog/note.js";
import { FIXED_SIGNATURE, IDENTITY_X, ed25519Jwk, smallOrderEncodings, smallOrderPoints } from "../../../helpers/ed25519-small-order.js";

const TYP = "svc-test+jws";
const ED25519_L = 2n ** 252n + 27742317777372353535851937790883648493n;

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === "function" ? p() : p);
    return "OK";
  } catch (e) {
    if (e instanceof JoseError) return e.code;
    throw e;
  }
}

/** base64url text with the spare bits of its last character set (same bytes, another spelling). */
function spareBitsSet(text: string): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const spare = (text.length * 6) % 8; // 2 or 4 spare bits
  const last = alphabet.indexOf(text.at(-1) ?? "A");
  const respelled = text.slice(0, -1) + (alphabet[last | ((1 << spare) - 1)] ?? "");
  expect(respelled).not.toBe(text);
  expect(Buffer.from(respelled, "base64url").equals(Buffer.from(text, "base64url"))).toBe(true);
  return respelled;
}

/** The high-S twin of a 64-byte ES256 signature `r || s`: `r || n - s` (it verifies too). */
function highSTwin(sig: Buffer): Buffer {
  const s = BigInt(`0x${sig.subarray(32).toString("hex")}`);
  return Buffer.concat([sig.subarray(0, 32), Buffer.from((P256_ORDER - s).toString(16).padStart(64, "0"), "hex")]);
}

describe("base64url: one spelling", () => {
  it("accepts only text that re-encodes to itself", () => {
    expect(isCanonicalBase64url("AQID")).toBe(true);
    expect(isCanonicalBase64url("AQ")).toBe(true);
    expect(isCanonicalBase64url("AR")).toBe(false); // spare bits set: decodes to the same byte as "AQ"
    expect(Buffer.from("AR", "base64url").equals(Buffer.from("AQ", "base64url"))).toBe(true);
    expect(isCanonicalBase64url("AQ==")).toBe(false); // padding
    expect(isCanonicalBase64url("AQ+/")).toBe(false); // standard alphabet
    expect(isCanonicalBase64url("A")).toBe(false); // no byte fits one character
  });

  it("a JWK coordinate with spare bits set (the same key under another thumbprint) is refused", () => {
    for (const s of [generateSigner("EdDSA"), generateSigner("ES256")]) {
      const respelled = { ...s.publicJwk, x: spareBitsSet(s.publicJwk.x) };
      expect(() => parsePublicJwk(respelled)).toThrow(/canonical base64url/);
      expect(() => publicKeyObject(respelled as PublicJwk)).toThrow(JoseError);
    }
  });

  it("a signed record whose signature has spare bits set is refused before any key (JWS_MALFORMED)", async () => {
    const s = generateSigner("EdDSA");
    const jws = await signRecord({ a: 1 }, s, TYP);
    const respelled = { ...jws, signature: spareBitsSet(jws.signature) };
    expect(await codeOf(verifySignedRecord(jws, s.publicJwk, { typ: TYP, record: { a: 1 } }))).toBe("OK");
    expect(await codeOf(verifySignedRecord(respelled, s.publicJwk, { typ: TYP, record: { a: 1 } }))).toBe("JWS_MALFORMED");
    expect(await verifyJwsSignature(respelled, s.publicJwk, "EdDSA")).toBe(false);
    expect(verifyJwsInput(s.publicJwk, "EdDSA", `${jws.protected}.${jws.payload}`, respelled.signature)).toBe(false);
  });
});

describe("ES256: both S halves verify, one identity", () => {
  const p256 = generateSigner("ES256");
  const n2 = P256_ORDER >> 1n;
  const sOf = (sig: string | Buffer): bigint => BigInt(`0x${(typeof sig === "string" ? Buffer.from(sig, "base64url") : sig).subarray(32).toString("hex")}`);

  it("Writ signs in the low-S form (node alone gives a high S about every other time)", async () => {
    for (let i = 0; i < 24; i++) {
      expect(sOf((await signJws(`{"i":${i}}`, p256, TYP)).signature) <= n2).toBe(true);
      expect(sOf(signJwsInput(`eyJhIjoxfQ.${i}`, p256)) <= n2).toBe(true);
    }
    const high = highSTwin(Buffer.from((await signJws("{}", p256, TYP)).signature, "base64url"));
    expect(sOf(lowS("ES256", high)) <= n2).toBe(true);
  });

  it("the high-S twin of a valid signature verifies, and hashes as the same signed record (withLowSSignature, lowSJws)", async () => {
    const record = { svc: 1, amount: 50 };
    const jws = await signRecord(record, p256, TYP);
    const sig = Buffer.from(jws.signature, "base64url");
    const twin = highSTwin(sig);
    const data = Buffer.from(`${jws.protected}.${jws.payload}`, "ascii");
    // The premise: the twin is a valid ECDSA signature.
    expect(verify("sha256", data, { key: createPublicKey({ key: { ...p256.publicJwk }, format: "jwk" }), dsaEncoding: "ieee-p1363" }, twin)).toBe(true);

    expect(verifySignatureBytes(p256.publicJwk, "ES256", data, sig)).toBe(true);
    expect(verifySignatureBytes(p256.publicJwk, "ES256", data, twin)).toBe(true);
    const twinJws: JwsObject = { ...jws, signature: twin.toString("base64url") };
    expect(await verifyJwsSignature(twinJws, p256.publicJwk, "ES256")).toBe(true);
    expect(verifyJwsInput(p256.publicJwk, "ES256", data.toString("ascii"), twinJws.signature)).toBe(true);
    expect(await codeOf(verifySignedRecord(twinJws, p256.publicJwk, { typ: TYP, record }))).toBe("OK");
    expect(await codeOf(verifySignedRecord(jws, p256.publicJwk, { typ: TYP, record }))).toBe("OK");
    // One identity: both spellings hash alike once normalised, and the normalised one verifies.
    expect(lowSJws(twinJws)).toEqual(jws);
    expect(lowSJws(jws)).toBe(jws);
    expect(hashOf(withLowSSignature({ ...record, signature: twinJws }))).toBe(hashOf(withLowSSignature({ ...record, signature: jws })));
    expect(lowSSignatureText("ES256", twinJws.signature)).toBe(jws.signature);
    expect(lowSSignatureText("EdDSA", twinJws.signature)).toBe(twinJws.signature);
  });

  it("refuses r or s of 0 or >= n, and a signature that is not 64 bytes", () => {
    const data = Buffer.from("x.y");
    const sig = Buffer.from(signJwsInput("x.y", p256), "base64url");
    const zeroS = Buffer.concat([sig.subarray(0, 32), Buffer.alloc(32)]);
    const bigR = Buffer.concat([Buffer.alloc(32, 0xff), sig.subarray(32)]);
    for (const bad of [zeroS, bigR, sig.subarray(0, 63), Buffer.concat([sig, Buffer.alloc(1)])]) {
      expect(verifySignatureBytes(p256.publicJwk, "ES256", data, bad)).toBe(false);
    }
    expect(verifySignatureBytes(p256.publicJwk, "ES256", data, sig)).toBe(true);
  });
});

describe("EdDSA: S below L", () => {
  it("refuses S + L (OpenSSL does too; the rule is explicit here)", async () => {
    const ed = generateSigner("EdDSA");
    const jws = await signRecord({ a: 1 }, ed, TYP);
    const sig = Buffer.from(jws.signature, "base64url");
    const s = BigInt(`0x${Buffer.from(sig.subarray(32)).reverse().toString("hex")}`);
    const sPlusL = Buffer.concat([sig.subarray(0, 32), Buffer.from((s + ED25519_L).toString(16).padStart(64, "0"), "hex").reverse()]);
    const respelled = { ...jws, signature: sPlusL.toString("base64url") };
    expect(await codeOf(verifySignedRecord(respelled, ed.publicJwk, { typ: TYP, record: { a: 1 } }))).toBe("JWS_SIGNATURE_NOT_CANONICAL");
  });
});

describe("Ed25519 small-order keys", () => {
  const encodings = smallOrderEncodings();

  it("the curve has 8 small-order points with 14 encodings, and the refused list is exactly their y coordinates", () => {
    expect(new Set(smallOrderPoints().map(([x, y]) => `${x},${y}`)).size).toBe(8);
    expect(encodings).toHaveLength(14);
    const ys = new Set(
      encodings.map((e) => {
        const b = Buffer.from(e, "base64url");
        b[31] = (b[31] ?? 0) & 0x7f;
        return BigInt(`0x${Buffer.from(b).reverse().toString("hex")}`);
      }),
    );
    expect([...ys].sort()).toEqual([...ED25519_SMALL_ORDER_Y].sort());
  });

  it("every encoding is refused as a public key, by parsePublicJwk and by publicKeyObject, with a reason", () => {
    for (const x of encodings) {
      expect(() => parsePublicJwk(ed25519Jwk(x)), x).toThrow(/small-order point/);
      expect(() => publicKeyObject(ed25519Jwk(x)), x).toThrow(/small-order point/);
      expect(keyEncodingProblem("OKP", Buffer.from(x, "base64url"))).toMatch(/small-order/);
    }
  });

  it("a non-canonical encoding (y >= p) of another point is refused", () => {
    const y = 2n ** 255n - 19n + 2n; // y = 2 + p
    const x = Buffer.from(y.toString(16).padStart(64, "0"), "hex").reverse().toString("base64url");
    expect(() => parsePublicJwk(ed25519Jwk(x))).toThrow(/not a canonical Ed25519 point encoding/);
  });

  it("with the identity as the key, a fixed signature verifies every payload in node 20's OpenSSL; Writ's primitive, signed records and signed notes never", async () => {
    const identity = ed25519Jwk(IDENTITY_X);
    // Whether node itself accepts it depends on its OpenSSL (node 20's does on every payload,
    // node 24's refuses): Writ refuses the key before node is asked, on both.
    const nodeAccepts = (payload: string): boolean => {
      try {
        return verify(null, Buffer.from(payload), createPublicKey({ key: identity, format: "jwk" }), FIXED_SIGNATURE);
      } catch {
        return false;
      }
    };
    const accepted = ["pay 50 USD", "pay 5000 USD", "anything"].map(nodeAccepts);
    expect(accepted.every((a) => a === accepted[0])).toBe(true); // the same answer for every payload: the key does not bind it

    for (const payload of ["pay 50 USD", "pay 5000 USD"])
      expect(verifySignatureBytes(identity as PublicJwk, "EdDSA", Buffer.from(payload), FIXED_SIGNATURE)).toBe(false);
    const protectedHeader = Buffer.from(JSON.stringify({ alg: "EdDSA", typ: TYP })).toString("base64url");
    const forged: JwsObject = {
      protected: protectedHeader,
      payload: Buffer.from('{"a":1}').toString("base64url"),
      signature: FIXED_SIGNATURE.toString("base64url"),
    };
    expect(await codeOf(verifySignedRecord(forged, identity, { typ: TYP, record: { a: 1 } }))).toBe("JWK_INVALID");
    expect(await verifyJwsSignature(forged, identity as PublicJwk, "EdDSA")).toBe(false);

    const noteText = "writ.example/log\n1\nAAAA\n";
    // A signature line for the identity key: its key hash is computed the same way as any key's.
    const line = Buffer.concat([noteKeyHash("writ.example/log", identity as PublicJwk), FIXED_SIGNATURE]).toString("base64");
    expect(() => openNote(`${noteText}\n\u2014 writ.example/log ${line}\n`, "writ.example/log", identity as PublicJwk)).toThrow(/does not verify/);
  });
});

describe("P-256 keys", () => {
  it("refuses a coordinate not below p and a point off the curve (node checks the curve on import)", () => {
    const s = generateSigner("ES256");
    const p = s.publicJwk as Extract<PublicJwk, { kty: "EC" }>;
    expect(() => parsePublicJwk({ ...p, x: Buffer.alloc(32, 0xff).toString("base64url") })).toThrow(/not a canonical P-256 coordinate/);
    const y = Buffer.from(p.y, "base64url");
    y[31] = (y[31] ?? 0) ^ 1;
    expect(() => parsePublicJwk({ ...p, y: y.toString("base64url") })).toThrow(/not a valid point on its curve/);
    expect(() => parsePublicJwk({ ...p, x: Buffer.alloc(32).toString("base64url"), y: Buffer.alloc(32).toString("base64url") })).toThrow(
      /not a valid point on its curve/,
    );
    expect(parsePublicJwk(p)).toEqual(p);
  });
});
