import { describe, expect, it } from "vitest";
import { canonicalJson, hashOf, type HashString } from "../../../../src/core/canonical/index.js";
import { generateSigner, signJws, type Signer } from "../../../../src/core/jose/index.js";
import { ACK_TYP, ackStates, signAcknowledgement, verifyAcknowledgement } from "../../../../src/core/agreement/acks.js";
import type { AckRole, Acknowledgement, Mandate } from "../../../../src/core/agreement/types.js";

const merchant = generateSigner("ES256");
const psp = generateSigner("EdDSA");
const AGR = "agr_acks";
const CURRENT: HashString = hashOf("v3");
const OLDER: HashString[] = [hashOf("v1"), hashOf("v2")];

const mandate: Mandate = {
  intent_id: "int_1",
  principal: { type: "business", id: "biz_1" },
  agent: { agent_id: "agt_1" },
  currency: "USD",
  required_acknowledgements: ["merchant", "psp", "issuer", "merchant"],
};

function ack(role: AckRole, signer: Signer, mandate_hash: HashString, agreement_id = AGR): Promise<Acknowledgement> {
  return signAcknowledgement({ agreement_id, mandate_hash, role, id: `${role}_1`, at: "2025-01-02T03:04:05Z" }, signer);
}

describe("signAcknowledgement / verifyAcknowledgement", () => {
  it.each<[string, Signer]>([
    ["P-256", merchant],
    ["Ed25519", psp],
  ])("signs the canonical ack without signature (%s)", async (_n, signer) => {
    const a = await signAcknowledgement(
      { agreement_id: AGR, mandate_hash: CURRENT, role: "merchant", id: "m_1", at: "2025-01-02T03:04:05Z", domain: "shop.example" },
      signer,
    );
    expect(a).toMatchObject({ svc_ack: 1, public_key: signer.publicJwk, domain: "shop.example" });
    const { signature: _s, ...body } = a;
    expect(Buffer.from(a.signature.payload, "base64url").toString("utf8")).toBe(canonicalJson(body));
    expect(JSON.parse(Buffer.from(a.signature.protected, "base64url").toString("utf8"))).toMatchObject({ typ: ACK_TYP, alg: signer.alg });
    expect(await verifyAcknowledgement(a)).toBe(true);
  });

  it("rejects a changed field, a swapped key, a wrong typ, a wrong version and garbage", async () => {
    const a = await ack("merchant", merchant, CURRENT);
    expect(await verifyAcknowledgement({ ...a, mandate_hash: OLDER[0]! })).toBe(false);
    expect(await verifyAcknowledgement({ ...a, role: "issuer" })).toBe(false);
    expect(await verifyAcknowledgement({ ...a, public_key: psp.publicJwk })).toBe(false);
    expect(await verifyAcknowledgement({ ...a, svc_ack: 2 as 1 })).toBe(false);
    expect(await verifyAcknowledgement({ ...a, role: "boss" as AckRole })).toBe(false);
    const { signature: _s, ...body } = a;
    const wrongTyp = await signJws(canonicalJson(body), merchant, "svc-mandate+jws");
    expect(await verifyAcknowledgement({ ...a, signature: wrongTyp })).toBe(false);
    expect(await verifyAcknowledgement({ ...a, signature: null } as unknown as Acknowledgement)).toBe(false);
    expect(await verifyAcknowledgement({ ...a, public_key: { ...a.public_key, d: "x" } } as unknown as Acknowledgement)).toBe(false);
  });
});

describe("ackStates", () => {
  it("is current, outdated or missing per required role (each role once)", async () => {
    const acks = [await ack("merchant", merchant, OLDER[0]!), await ack("merchant", merchant, CURRENT), await ack("psp", psp, OLDER[1]!)];
    expect(await ackStates(mandate, CURRENT, acks, OLDER, AGR)).toEqual([
      { role: "merchant", state: "current" },
      { role: "psp", state: "outdated" },
      { role: "issuer", state: "missing" },
    ]);
  });

  it("never counts an ack for an older hash, another agreement, an unknown hash or a bad signature", async () => {
    const forged = { ...(await ack("merchant", merchant, OLDER[0]!)), mandate_hash: CURRENT };
    const acks = [
      forged,
      await ack("merchant", merchant, CURRENT, "agr_other"),
      await ack("psp", psp, hashOf("never a version")),
      await ack("issuer", psp, OLDER[0]!, "agr_other"),
    ];
    expect(await ackStates(mandate, CURRENT, acks, OLDER, AGR)).toEqual([
      { role: "merchant", state: "missing" },
      { role: "psp", state: "missing" },
      { role: "issuer", state: "missing" },
    ]);
    // An outdated forged ack does not count as outdated either.
    const forgedOld = { ...(await ack("psp", psp, CURRENT)), mandate_hash: OLDER[0]! };
    expect((await ackStates(mandate, CURRENT, [forgedOld], OLDER, AGR))[1]).toEqual({ role: "psp", state: "missing" });
  });

  it("reports no roles when none are required and tolerates hostile lists", async () => {
    const { required_acknowledgements: _r, ...none } = mandate;
    expect(await ackStates(none, CURRENT, [], OLDER, AGR)).toEqual([]);
    expect(await ackStates(mandate, CURRENT, [null, 3] as unknown as Acknowledgement[], OLDER, AGR)).toHaveLength(3);
  });
});
