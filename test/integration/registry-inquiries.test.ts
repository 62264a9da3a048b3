/**
 * Inquiries: the answer's shape, purpose codes, contributors' evidence hashes, the inquiry
 * record, and that no principal_id or e-mail address ever appears in an answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, type IntentAgreement } from "../../src/core/agreement/index.js";
import { generateSigner } from "../../src/core/jose/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { principalKey } from "../fixtures/records.js";
import { randomHash, startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";
import { acknowledgedBy, iso, mandate, registerAckKey, uid, type PaymentParty } from "../helpers/verify-world.js";

let w: RegistryWorld;
let opToken = "";
let walletOrg = "";
let walletKey = { key_id: "", token: "" };
let otherWalletToken = "";

/** Stores a signed agreement of `agentId` acknowledged by `parties` (changed by `transform` after signing). */
async function storeAcknowledged(agentId: string, parties: PaymentParty[], transform: (a: IntentAgreement) => IntentAgreement = (a) => a) {
  const at = iso(Date.now());
  const signed = await buildSignedAgreement({ agreement_id: uid("agr"), mandates: [mandate(agentId, "i1")], at }, principalKey);
  await upsertAgreement(w.db.pool, transform(await acknowledgedBy(signed, parties, at)), { agentId });
}

function inquire(token: string, body: unknown) {
  return w.call("POST", "/v1/inquiries", token, body);
}

beforeAll(async () => {
  w = await startRegistryWorld();
  opToken = (await w.issueKey(await w.createOrg("agent_operator"))).token;
  walletOrg = await w.createOrg("wallet");
  walletKey = await w.issueKey(walletOrg);
  otherWalletToken = (await w.issueKey(await w.createOrg("bank_issuer"))).token;
});

afterAll(async () => {
  await w?.close();
});

describe("POST /v1/inquiries", () => {
  it("answers the agent, its trust score, identity, verification and counts, and records the inquiry", async () => {
    const { agent_id, fingerprint, answer } = await w.registerAgent(opToken, { principal_id: "prn_hidden7", verification_level: "institution_attested" });
    const r = await inquire(walletKey.token, { agent_id, purpose_code: "payment_authorization" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      inquiry_id: expect.stringMatching(/^inq_[0-9a-f]{24}$/),
      purpose_code: "payment_authorization",
      at: expect.any(String),
      agent: { agent_id, status: "active", verification_level: "institution_attested" },
      trust_score: { score: 700, cold_start: true, reasons: [{ code: "VERIFICATION_LEVEL", points: 700 }] },
      identity: { fingerprint, registered_at: expect.any(String), operator_org_id: expect.stringMatching(/^org_/) },
      verification: { level: "institution_attested" },
      active_authorizations: 0,
      revocations: 0,
      incidents: 0,
    });
    expect(answer.body.score).toBe(700);
    expect(JSON.stringify(r.body)).not.toContain("prn_hidden7");
    expect(JSON.stringify(r.body)).not.toContain("principal_id");
    expect(JSON.stringify(r.body)).not.toContain("@");
    const { rows } = await w.db.pool.query("SELECT org_id, key_id, agent_id, purpose_code FROM inquiries WHERE inquiry_id = $1", [r.body.inquiry_id]);
    expect(rows).toEqual([{ org_id: walletOrg, key_id: walletKey.key_id, agent_id, purpose_code: "payment_authorization" }]);
  });

  it("accepts each purpose code", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    for (const purpose_code of ["payment_authorization", "account_opening", "dispute_review", "fraud_investigation", "compliance_check"]) {
      expect((await inquire(walletKey.token, { agent_id, purpose_code })).status).toBe(200);
    }
    const { rows } = await w.db.pool.query("SELECT count(*)::int AS n FROM inquiries WHERE agent_id = $1", [agent_id]);
    expect(rows[0].n).toBe(5);
  });

  it("answers 400 without purpose_code or with an unknown one, and 404 for an unknown agent; none is recorded", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    expect(await inquire(walletKey.token, { agent_id })).toMatchObject({ status: 400, body: { error: "purpose_code is required" } });
    expect(await inquire(walletKey.token, { agent_id, purpose_code: "marketing" })).toMatchObject({
      status: 400,
      body: { error: "purpose_code must be one of: payment_authorization, account_opening, dispute_review, fraud_investigation, compliance_check" },
    });
    expect(await inquire(walletKey.token, { purpose_code: "dispute_review" })).toMatchObject({ status: 400, body: { error: "agent_id is required" } });
    expect(await inquire(walletKey.token, { agent_id: "nobody", purpose_code: "dispute_review" })).toMatchObject({
      status: 404,
      body: { error: "agent was not found" },
    });
    const { rows } = await w.db.pool.query("SELECT count(*)::int AS n FROM inquiries WHERE agent_id IN ($1, 'nobody')", [agent_id]);
    expect(rows[0].n).toBe(0);
  });

  it("gives the 10 newest evidence hashes only to contributors: organizations that reported AND are a payment party of the agent's agreements", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    const theirs: string[] = [];
    for (let i = 0; i < 8; i++) {
      const h = randomHash();
      theirs.push(h);
      expect(
        (await w.call("POST", "/v1/reports", otherWalletToken, { agent_id, kind: "transaction_outcome", evidence_hash: h, summary: `t${i}` })).status,
      ).toBe(201);
    }
    const before = await inquire(walletKey.token, { agent_id, purpose_code: "dispute_review" });
    expect(before.body).not.toHaveProperty("recent_evidence_hashes");
    expect(JSON.stringify(before.body)).not.toContain(theirs[0]?.slice(7));

    // Reports alone (one bogus report, or several) do not make a contributor.
    const mine = [randomHash(), randomHash(), randomHash()];
    for (const h of mine) {
      expect((await w.call("POST", "/v1/reports", walletKey.token, { agent_id, kind: "transaction_outcome", evidence_hash: h, summary: "ok" })).status).toBe(
        201,
      );
    }
    expect((await inquire(walletKey.token, { agent_id, purpose_code: "dispute_review" })).body).not.toHaveProperty("recent_evidence_hashes");

    // Nor does an acknowledgement naming the wallet whose signature does not verify (refused when stored),
    // nor one signed by a key the wallet never registered.
    const wallet: PaymentParty = { orgId: walletOrg, key: walletKey.token, signer: generateSigner(), role: "psp" };
    await expect(storeAcknowledged(agent_id, [wallet])).rejects.toMatchObject({ code: "ACK_KEY_UNREGISTERED" });
    await registerAckKey(w, walletOrg, wallet.signer);
    await expect(
      storeAcknowledged(agent_id, [wallet], (a) => ({ ...a, acknowledgements: (a.acknowledgements ?? []).map((k) => ({ ...k, at: "2020-01-01T00:00:00Z" })) })),
    ).rejects.toMatchObject({ code: "ACK_KEY_UNREGISTERED" });
    expect((await inquire(walletKey.token, { agent_id, purpose_code: "dispute_review" })).body).not.toHaveProperty("recent_evidence_hashes");

    // A payment party of one of the agent's agreements that has reported: a contributor.
    await storeAcknowledged(agent_id, [wallet]);
    const after = await inquire(walletKey.token, { agent_id, purpose_code: "dispute_review" });
    const hashes = after.body.recent_evidence_hashes as string[];
    expect(hashes).toHaveLength(10);
    expect(hashes).toEqual([...mine.slice().reverse(), ...theirs.slice(1).reverse()]);

    // A party that has filed nothing still sees no hashes.
    const merchantOrg = await w.createOrg("merchant");
    const merchant: PaymentParty = { orgId: merchantOrg, key: (await w.issueKey(merchantOrg)).token, signer: generateSigner(), role: "merchant" };
    await registerAckKey(w, merchantOrg, merchant.signer);
    await storeAcknowledged(agent_id, [merchant]);
    expect((await inquire(merchant.key, { agent_id, purpose_code: "dispute_review" })).body).not.toHaveProperty("recent_evidence_hashes");
  });

  it("reflects reports in the score, incidents, and the agreement area's counts through the SQL seams", async () => {
    const { agent_id } = await w.registerAgent(opToken);
    await w.call("POST", "/v1/reports", walletKey.token, { agent_id, kind: "chargeback", evidence_hash: randomHash(), summary: "cb" });
    await w.call("POST", "/v1/reports", walletKey.token, { agent_id, kind: "fraud_incident", evidence_hash: randomHash(), summary: "fraud" });
    const r = await inquire(walletKey.token, { agent_id, purpose_code: "fraud_investigation" });
    expect(r.body.incidents).toBe(1);
    // One organization: only its most severe report counts (the fraud incident, not also the chargeback).
    expect(r.body.trust_score).toEqual({
      score: 600 - 250,
      cold_start: true,
      reasons: [
        { code: "VERIFICATION_LEVEL", points: 600 },
        { code: "FRAUD_INCIDENT", points: -250 },
      ],
    });
    await w.call("POST", "/v1/reports", otherWalletToken, { agent_id, kind: "chargeback", evidence_hash: randomHash(), summary: "cb" });
    expect((await inquire(walletKey.token, { agent_id, purpose_code: "fraud_investigation" })).body.trust_score).toMatchObject({ score: 600 - 250 - 60 });

    // What the agreement area's migration does: replace the seam functions (restored after).
    const client = await w.db.pool.connect();
    const { rows: originals } = await client.query<{ def: string }>(
      "SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p WHERE p.proname IN ('registry_revocation_count', 'registry_active_authorizations')",
    );
    expect(originals).toHaveLength(2);
    try {
      await client.query("BEGIN");
      await client.query(`CREATE OR REPLACE FUNCTION registry_revocation_count(p_agent_id text) RETURNS bigint LANGUAGE sql STABLE AS $$ SELECT 2::bigint $$`);
      await client.query(
        `CREATE OR REPLACE FUNCTION registry_active_authorizations(p_agent_id text) RETURNS bigint LANGUAGE sql STABLE AS $$ SELECT 3::bigint $$`,
      );
      await client.query("COMMIT");
      const seamed = await inquire(walletKey.token, { agent_id, purpose_code: "fraud_investigation" });
      expect(seamed.body).toMatchObject({ revocations: 2, active_authorizations: 3 });
      expect((seamed.body.trust_score as { reasons: unknown[] }).reasons).toContainEqual({ code: "REVOCATION", points: -80 });
    } finally {
      for (const { def } of originals) await client.query(def);
      client.release();
    }
    expect((await inquire(walletKey.token, { agent_id, purpose_code: "fraud_investigation" })).body).toMatchObject({
      revocations: 0,
      active_authorizations: 0,
    });
  });
});
