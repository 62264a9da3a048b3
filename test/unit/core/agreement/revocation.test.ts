import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../../src/core/canonical/index.js";
import { generateSigner, signJws, type Signer } from "../../../../src/core/jose/index.js";
import { mandateHash, signMandate } from "../../../../src/core/agreement/mandate.js";
import { REVOCATION_TYP, signRevocation, verifyRevocation } from "../../../../src/core/agreement/revocation.js";
import type { AgreementRevocation, IntentAgreement, Mandate } from "../../../../src/core/agreement/types.js";

function draft(intent_id: string): Mandate {
  return { intent_id, principal: { type: "human", id: "prn_1" }, agent: { agent_id: "agt_1" }, currency: "USD", rendering: intent_id };
}

async function agreement(signer: Signer, intents: string[]): Promise<IntentAgreement> {
  return {
    agreement_id: "agr_rev",
    status: "active",
    mandates: await Promise.all(intents.map((i) => signMandate(draft(i), signer))),
    ledger: [],
    ledger_sequence: 0,
    ledger_as_of: "2025-01-01T00:00:00Z",
    events: [],
  };
}

const WHEN = { reason: "lost phone", at: "2025-01-03T00:00:00Z" };

describe.each<[string, Signer]>([
  ["Ed25519", generateSigner("EdDSA")],
  ["P-256", generateSigner("ES256")],
])("agreement revocation (%s)", (_n, principal) => {
  it("revokes a single mandate with mandate_hash alone", async () => {
    const a = await agreement(principal, ["int_a"]);
    const r = await signRevocation(a, WHEN, principal);
    expect(r).toMatchObject({ svc_revocation: 1, agreement_id: "agr_rev", mandate_hash: mandateHash(a.mandates[0]!), ...WHEN });
    expect(r.mandate_hashes).toBeUndefined();
    const { signature: _s, ...body } = r;
    expect(Buffer.from(r.signature.payload, "base64url").toString("utf8")).toBe(canonicalJson(body));
    expect(JSON.parse(Buffer.from(r.signature.protected, "base64url").toString("utf8"))).toMatchObject({ typ: REVOCATION_TYP });
    expect(await verifyRevocation({ ...a, revocation: r })).toBe("valid");
    expect(await verifyRevocation(a)).toBe("none");
  });

  it("covers every live mandate when there are several", async () => {
    const a = await agreement(principal, ["int_a", "int_b", "int_c"]);
    const r = await signRevocation(a, WHEN, principal);
    expect(r.mandate_hashes).toEqual(a.mandates.map(mandateHash));
    expect(await verifyRevocation({ ...a, revocation: r })).toBe("valid");
    // The same revocation no longer covers an agreement that gained or changed an intent.
    const grown = { ...a, mandates: [...a.mandates, await signMandate(draft("int_d"), principal)] };
    expect(await verifyRevocation({ ...grown, revocation: r })).toMatchObject({ state: "invalid", problem: expect.stringMatching(/does not cover 1/) });
  });

  it("names a payload that is not canonical JSON JWS_PAYLOAD_NOT_CANONICAL, before any key or coverage check", async () => {
    const a = await agreement(principal, ["int_a"]);
    const { signature: _s, ...body } = await signRevocation(a, WHEN, principal);
    // Signed by the right principal, over the same record, but spelled with whitespace.
    const signature = await signJws(JSON.stringify(body, null, 1), principal, REVOCATION_TYP);
    const problem = "JWS_PAYLOAD_NOT_CANONICAL: JWS payload is not the RFC 8785 canonical form of its JSON";
    expect(await verifyRevocation({ ...a, revocation: { ...body, signature } })).toEqual({ state: "invalid", problem });
    // Also when the key and the coverage would fail too: the token's own problem comes first.
    const stranger = await agreement(generateSigner(), ["int_a", "int_b"]);
    expect(await verifyRevocation({ ...stranger, revocation: { ...body, signature } })).toEqual({ state: "invalid", problem });
  });

  it("refuses mandate_hash alone with several mandates, even when correctly signed", async () => {
    const a = await agreement(principal, ["int_a", "int_b"]);
    const { signature: _s, mandate_hashes: _m, ...body } = await signRevocation(a, WHEN, principal);
    const signature = await signJws(canonicalJson(body), principal, REVOCATION_TYP);
    const r: AgreementRevocation = { ...body, signature };
    expect(await verifyRevocation({ ...a, revocation: r })).toMatchObject({ state: "invalid", problem: expect.stringMatching(/no mandate_hashes/) });
  });

  it("refuses another signer, another agreement, a changed reason and mixed principal keys", async () => {
    const a = await agreement(principal, ["int_a", "int_b"]);
    const stranger = generateSigner("EdDSA");
    const hashes = a.mandates.map(mandateHash);
    const body = { svc_revocation: 1 as const, agreement_id: "agr_rev", mandate_hash: hashes[0]!, mandate_hashes: hashes, ...WHEN };
    const forged: AgreementRevocation = { ...body, signature: await signJws(canonicalJson(body), stranger, REVOCATION_TYP) };
    expect(await verifyRevocation({ ...a, revocation: forged })).toMatchObject({ state: "invalid", problem: expect.stringMatching(/does not verify/) });
    const r = await signRevocation(a, WHEN, principal);
    expect(await verifyRevocation({ ...a, revocation: { ...r, agreement_id: "agr_x" } })).toMatchObject({ problem: "the revocation names another agreement" });
    expect(await verifyRevocation({ ...a, revocation: { ...r, reason: "changed my mind" } })).toMatchObject({ state: "invalid" });
    expect(await verifyRevocation({ ...a, revocation: { ...r, svc_revocation: 2 as 1 } })).toMatchObject({ state: "invalid" });
    const mixed = { ...a, mandates: [a.mandates[0]!, await signMandate(draft("int_b"), stranger)] };
    expect(await verifyRevocation({ ...mixed, revocation: r })).toMatchObject({ problem: expect.stringMatching(/another principal key/) });
    const { public_key: _k, ...noKey } = a.mandates[1]!.principal;
    const keyless = { ...a, mandates: [a.mandates[0]!, { ...a.mandates[1]!, principal: noKey }] };
    expect(await verifyRevocation({ ...keyless, revocation: r })).toMatchObject({ problem: expect.stringMatching(/no usable principal public_key/) });
  });

  it("refuses to sign for a principal who did not sign the mandates", async () => {
    const a = await agreement(principal, ["int_a"]);
    await expect(signRevocation(a, WHEN, generateSigner("EdDSA"))).rejects.toMatchObject({ code: "SIGNER_NOT_PRINCIPAL" });
  });

  it("reports hostile revocations as invalid, never throwing", async () => {
    const a = await agreement(principal, ["int_a"]);
    for (const bad of [null, 5, { svc_revocation: 1, agreement_id: "agr_rev", mandate_hash: mandateHash(a.mandates[0]!), signature: {} }]) {
      expect(await verifyRevocation({ ...a, revocation: bad as unknown as AgreementRevocation })).toMatchObject({ state: "invalid" });
    }
    const r = await signRevocation(a, WHEN, principal);
    expect(await verifyRevocation({ ...a, revocation: { ...r, mandate_hashes: [] } })).toMatchObject({ problem: expect.stringMatching(/non-empty/) });
    expect(await verifyRevocation({ ...a, mandates: [], revocation: r })).toMatchObject({ problem: "the agreement holds no mandate" });
  });
});
