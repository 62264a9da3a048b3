import { describe, expect, it } from "vitest";
import { canonicalBytes, hashFromBytes } from "../../../../src/core/canonical/index.js";
import { JoseError, generateSigner, signJws, signerFromSeed } from "../../../../src/core/jose/index.js";
import { ProofError, TREE_HEAD_TYP, leafHash, signTreeHead, verifyTreeHead, type TreeHead } from "../../../../src/core/tlog/index.js";

const signer = signerFromSeed(Buffer.alloc(32, 3));
const root = leafHash(Buffer.from("root"));
const AT = "2025-05-01T12:00:00Z";

async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ProofError || e instanceof JoseError) return e.code;
    throw e;
  }
  return "none";
}

describe("tree heads", () => {
  it("signs the canonical head without signature, with typ svc-tree-head+jws", async () => {
    const head = await signTreeHead(signer, 42, root, AT);
    const { signature, ...unsigned } = head;
    expect(unsigned).toEqual({ algorithm: "EdDSA", at: AT, svc_tree_head: 1, root: hashFromBytes(root), tree_size: 42 });
    expect(Buffer.from(signature.payload, "base64url").equals(canonicalBytes(unsigned))).toBe(true);
    const header = JSON.parse(Buffer.from(signature.protected, "base64url").toString("utf8")) as Record<string, unknown>;
    expect(header).toEqual({ alg: "EdDSA", kid: signer.kid, typ: TREE_HEAD_TYP });
  });

  it("round-trips through JSON", async () => {
    const head = await signTreeHead(signer, 0, root, AT);
    const wire: unknown = JSON.parse(JSON.stringify(head));
    expect(await verifyTreeHead(wire, signer.publicJwk)).toEqual(head);
  });

  it("rejects a wrong typ", async () => {
    const head = await signTreeHead(signer, 5, root, AT);
    const { signature: _s, ...unsigned } = head;
    for (const typ of ["svc-revocation-push+jws", undefined]) {
      const signature = await signJws(canonicalBytes(unsigned), signer, typ);
      expect(await rejection(verifyTreeHead({ ...unsigned, signature }, signer.publicJwk))).toBe("JWS_TYP_MISMATCH");
    }
  });

  it("rejects changed members, another key and a wrong shape", async () => {
    const head = await signTreeHead(signer, 5, root, AT);
    const other = hashFromBytes(leafHash(Buffer.from("other")));
    expect(await rejection(verifyTreeHead({ ...head, tree_size: 6 }, signer.publicJwk))).toBe("JWS_PAYLOAD_MISMATCH");
    expect(await rejection(verifyTreeHead({ ...head, root: other }, signer.publicJwk))).toBe("JWS_PAYLOAD_MISMATCH");
    expect(await rejection(verifyTreeHead({ ...head, at: "2025-05-01T12:00:01Z" }, signer.publicJwk))).toBe("JWS_PAYLOAD_MISMATCH");
    expect(await rejection(verifyTreeHead(head, generateSigner("EdDSA").publicJwk))).toBe("JWS_KID_MISMATCH");
    const bad: unknown[] = [
      null,
      [],
      { ...head, extra: true },
      { ...head, algorithm: "ES256" },
      { ...head, svc_tree_head: "1" },
      { ...head, tree_size: -1 },
      { ...head, tree_size: 2 ** 53 },
      { ...head, tree_size: 1.5 },
      { ...head, root: "sha256:xyz" },
      { ...head, at: "yesterday" },
      (({ signature: _s, ...rest }: TreeHead) => rest)(head),
    ];
    for (const h of bad) expect(await rejection(verifyTreeHead(h, signer.publicJwk))).toBe("PROOF_MALFORMED");
    expect(await rejection(verifyTreeHead({ ...head, signature: { ...head.signature, extra: "x" } }, signer.publicJwk))).toBe("JWS_MALFORMED");
  });

  it("refuses a P-256 signer and bad input", async () => {
    expect(await rejection(signTreeHead(generateSigner("ES256"), 1, root, AT))).toBe("JWK_UNSUPPORTED");
    expect(await rejection(signTreeHead(signer, -1, root, AT))).toBe("PROOF_MALFORMED");
    expect(await rejection(signTreeHead(signer, 1, Buffer.alloc(16), AT))).toBe("PROOF_MALFORMED");
    expect(await rejection(signTreeHead(signer, 1, root, "not a time"))).toBe("PROOF_MALFORMED");
  });

  it("refuses a head signed by a P-256 key under the stated EdDSA algorithm", async () => {
    const p256 = generateSigner("ES256");
    const head = await signTreeHead(signer, 5, root, AT);
    const { signature: _s, ...unsigned } = head;
    const signature = await signJws(canonicalBytes(unsigned), p256, TREE_HEAD_TYP);
    expect(await rejection(verifyTreeHead({ ...unsigned, signature }, p256.publicJwk))).toBe("PROOF_INVALID");
  });
});
