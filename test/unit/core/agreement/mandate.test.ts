import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, hashOf } from "../../../../src/core/canonical/index.js";
import { generateSigner, signJws, signerFromSeed, type Signer } from "../../../../src/core/jose/index.js";
import { MANDATE_TYP, mandateHash, mandateSigningBytes, signMandate, verifyMandate } from "../../../../src/core/agreement/mandate.js";
import type { Mandate } from "../../../../src/core/agreement/types.js";

const ed = signerFromSeed("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const p256 = generateSigner("ES256");

function draft(): Mandate {
  return {
    intent_id: "int_groceries",
    principal: { type: "human", id: "prn_ada" },
    agent: { agent_id: "agt_shopper" },
    purpose: "weekly groceries",
    natural_language: "Buy the usual groceries, café au lait included",
    currency: "EUR",
    maximum_amount: 120.5,
    cumulative_maximum: 400,
    categories: ["groceries"],
    merchants: ["shop.example"],
    not_before: "2025-01-01T00:00:00Z",
    expires_at: "2025-02-01T00:00:00Z",
    required_acknowledgements: ["merchant"],
    rendering: "Groceries up to 120.50 EUR per order, 400 EUR in total, in January 2025",
  };
}

describe.each<[string, Signer]>([
  ["Ed25519", ed],
  ["P-256", p256],
])("mandate signatures with %s", (_name, signer) => {
  it("signs over exactly the canonical mandate without signature, after setting algorithm and key", async () => {
    const input = draft();
    const signed = await signMandate(input, signer);
    expect(input.signature).toBeUndefined();
    expect(input.principal.public_key).toBeUndefined();
    expect(signed.algorithm).toBe(signer.alg);
    expect(signed.principal.public_key).toEqual(signer.publicJwk);
    const payload = Buffer.from(signed.signature!.payload, "base64url");
    expect(payload.equals(mandateSigningBytes(signed))).toBe(true);
    const { signature: _s, ...unsigned } = signed;
    expect(payload.toString("utf8")).toBe(canonicalJson(unsigned));
    const header = JSON.parse(Buffer.from(signed.signature!.protected, "base64url").toString("utf8")) as Record<string, unknown>;
    expect(header).toMatchObject({ alg: signer.alg, kid: signer.kid, typ: MANDATE_TYP });
    expect(await verifyMandate(signed)).toBe("valid");
  });

  it("hashes the mandate without its signature", async () => {
    const signed = await signMandate(draft(), signer);
    const { signature: _s, ...unsigned } = signed;
    expect(mandateHash(signed)).toBe(hashOf(unsigned));
    expect(mandateHash(unsigned)).toBe(mandateHash(signed));
    expect(mandateHash({ ...signed, rendering: "other" })).not.toBe(mandateHash(signed));
  });

  it("reports a changed field as invalid", async () => {
    const signed = await signMandate(draft(), signer);
    expect(await verifyMandate({ ...signed, maximum_amount: 1205 })).toBe("invalid");
    expect(await verifyMandate({ ...signed, rendering: "something else" })).toBe("invalid");
    expect(await verifyMandate({ ...signed, merchants: ["evil.example"] })).toBe("invalid");
  });

  it("reports another key in principal.public_key as invalid", async () => {
    const signed = await signMandate(draft(), signer);
    const other = generateSigner(signer.alg);
    expect(await verifyMandate({ ...signed, principal: { ...signed.principal, public_key: other.publicJwk } })).toBe("invalid");
  });

  it("reports an absent, disagreeing or unusable key or algorithm as invalid", async () => {
    const signed = await signMandate(draft(), signer);
    const { algorithm: _a, ...noAlg } = signed;
    expect(await verifyMandate(noAlg)).toBe("invalid");
    expect(await verifyMandate({ ...signed, algorithm: signer.alg === "EdDSA" ? "ES256" : "EdDSA" })).toBe("invalid");
    const { public_key: _k, ...noKey } = signed.principal;
    expect(await verifyMandate({ ...signed, principal: noKey })).toBe("invalid");
    const withPrivate = { ...signed.principal, public_key: { ...signed.principal.public_key!, d: "AAAA" } };
    expect(await verifyMandate({ ...signed, principal: withPrivate as Mandate["principal"] })).toBe("invalid");
  });

  it("reports a signature with the wrong typ, or over non-canonical bytes, as invalid", async () => {
    const base = await signMandate(draft(), signer);
    const { signature: _s, ...unsigned } = base;
    const wrongTyp = await signJws(mandateSigningBytes(base), signer, "svc-ack+jws");
    expect(await verifyMandate({ ...unsigned, signature: wrongTyp })).toBe("invalid");
    const noTyp = await signJws(mandateSigningBytes(base), signer);
    expect(await verifyMandate({ ...unsigned, signature: noTyp })).toBe("invalid");
    const pretty = await signJws(JSON.stringify(unsigned, null, 2), signer, MANDATE_TYP);
    expect(await verifyMandate({ ...unsigned, signature: pretty })).toBe("invalid");
  });

  it("says missing without a signature and invalid for garbage, never throwing", async () => {
    expect(await verifyMandate(draft())).toBe("missing");
    const signed = await signMandate(draft(), signer);
    for (const garbage of [null, 42, "jws", {}, { ...signed.signature, header: {} }, { protected: "!", payload: "", signature: "" }]) {
      expect(await verifyMandate({ ...signed, signature: garbage as unknown as Mandate["signature"] })).toBe("invalid");
    }
    expect(await verifyMandate({ ...signed, principal: undefined } as unknown as Mandate)).toBe("invalid");
  });

  it("refuses a signature string re-encoded with spare bits set (same bytes, other text)", async () => {
    const signed = await signMandate(draft(), signer);
    const sig = signed.signature!.signature;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const twin = alphabet[alphabet.indexOf(sig.slice(-1)) ^ 1]!;
    const malleated = { ...signed.signature!, signature: sig.slice(0, -1) + twin };
    expect(Buffer.from(malleated.signature, "base64url").equals(Buffer.from(sig, "base64url"))).toBe(true);
    expect(await verifyMandate({ ...signed, signature: malleated })).toBe("invalid");
  });
});

describe("one-byte changes to a signed mandate", () => {
  it("are always detected", async () => {
    const signed = await signMandate(draft(), ed);
    const bytes = Buffer.from(canonicalJson(signed), "utf8");
    let valueChanges = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 0, max: 255 }), async (at, value) => {
        runs++;
        const copy = Buffer.from(bytes);
        copy[at] = value === copy[at] ? (value + 1) % 256 : value;
        let parsed: unknown;
        try {
          parsed = JSON.parse(new TextDecoder().decode(copy));
        } catch {
          return; // not JSON any more: detected at the edge
        }
        if (isDeepStrictEqual(parsed, signed)) return;
        valueChanges++;
        expect(await verifyMandate(parsed as Mandate)).not.toBe("valid");
      }),
      { numRuns: 200 },
    );
    expect(valueChanges).toBeGreaterThan(runs * 0.25);
  });
});
