/**
 * Payment parties are named by the registry, not by the declaration (issue 27, hole 6): an
 * acknowledgement with role psp/merchant/issuer names an organization only when signed by a
 * live key that organization registered (POST /v1/orgs/{org_id}/ack-keys). The reproducer: the
 * operator countersigns its own agreement "as" an unrelated wallet with a key it made; the
 * store refuses it, and even a record holding such an acknowledgement (stored before the rule)
 * gives that wallet neither outcome recording nor read access.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mandateHash, signAcknowledgement, type IntentAgreement } from "../../src/core/agreement/index.js";
import { generateSigner, keyId } from "../../src/core/jose/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { withTransaction } from "../../src/store/pool.js";
import { action, iso, mandate, paymentParty, startVerifyWorld, storeAgreement, type PaymentParty, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

/** `a` with an acknowledgement naming `orgId` as psp, signed by `signer` (any key). */
async function forged(a: IntentAgreement, orgId: string, signer = generateSigner()): Promise<IntentAgreement> {
  const m = a.mandates[0];
  if (!m) throw new Error("no mandate");
  const ack = await signAcknowledgement(
    { agreement_id: a.agreement_id, mandate_hash: mandateHash(m), role: "psp", id: orgId, at: iso(Date.now() - 1000) },
    signer,
  );
  return { ...a, acknowledgements: [...(a.acknowledgements ?? []), ack] };
}

/** An agent whose agreement (cumulative 20 USD) two ALLOWs of 10 exhausted; the first ALLOW. */
async function spentAgreement(parties: PaymentParty[]) {
  const { agent_id } = await w.registerAgent(w.operatorKey);
  const stored = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { cumulative_maximum: 20 })], parties });
  const first = action();
  expect((await w.verify({ agent_id, action: first })).body.verdict).toBe("ALLOW");
  expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW");
  expect((await w.verify({ agent_id, action: action() })).body.reasons).toEqual(["CUMULATIVE_BUDGET_EXCEEDED"]);
  return { agent_id, ...stored, first };
}

describe("payment parties come from the registry", () => {
  it("an acknowledgement naming an unrelated wallet with a key the operator made is refused when stored", async () => {
    const walletOrg = await w.createOrg("wallet");
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const refused = storeAgreement(w, { mandates: [mandate(agent_id, "i1")], parties: [], transform: (a) => forged(a, walletOrg) });
    await expect(refused).rejects.toMatchObject({ code: "ACK_KEY_UNREGISTERED" });
    await expect(refused).rejects.toThrow(`names organization ${walletOrg}, but its key`);
  });

  it("a record that holds such an acknowledgement grants the named wallet nothing: no failed outcome, no read", async () => {
    const walletOrg = await w.createOrg("wallet");
    const walletKey = (await w.issueKey(walletOrg)).token;
    const { agent_id, agreement, agreementId, first } = await spentAgreement([]);
    // As stored before the rule (or by a path that skipped it): the forged ack in the row.
    const withForged = await forged(agreement, walletOrg);
    await w.db.pool.query("UPDATE agreements SET record = $3, revision = revision + 1 WHERE agent_id = $1 AND agreement_id = $2", [
      agent_id,
      agreementId,
      JSON.stringify(withForged),
    ]);

    const failed = await w.outcome({ agreement_id: agreementId, action_id: first.action_id, outcome: "failed" }, walletKey);
    expect(failed).toMatchObject({ status: 404, body: { error: "agreement was not found" } });
    expect((await w.call("GET", `/v1/agreements/${agreementId}`, walletKey)).status).toBe(404);
    expect((await w.call("GET", `/v1/agreements/${agreementId}/ledger`, walletKey)).status).toBe(404);
    // Nothing was released.
    expect((await w.verify({ agent_id, action: action() })).body.reasons).toEqual(["CUMULATIVE_BUDGET_EXCEEDED"]);
  });

  it("an acknowledgement signed by the organization's registered key names it, until the key is revoked", async () => {
    const wallet = await paymentParty(w, "wallet", "psp");
    const { agent_id, agreementId, first } = await spentAgreement([wallet]);
    expect((await w.call("GET", `/v1/agreements/${agreementId}`, wallet.key)).status).toBe(200);
    expect((await w.outcome({ agreement_id: agreementId, action_id: first.action_id, outcome: "failed" }, wallet.key)).status).toBe(200);
    expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW");

    const thumbprint = keyId(wallet.signer.publicJwk);
    const revoked = await w.call("DELETE", `/v1/orgs/${wallet.orgId}/ack-keys/${thumbprint}`, wallet.key);
    expect(revoked).toMatchObject({ status: 200, body: { thumbprint, org_id: wallet.orgId } });
    expect(typeof revoked.body.revoked_at).toBe("string");
    expect((await w.call("GET", `/v1/agreements/${agreementId}`, wallet.key)).status).toBe(404);
  });

  it("a key registered by another organization does not name this one", async () => {
    const other = await paymentParty(w, "processor_psp", "psp");
    const walletOrg = await w.createOrg("wallet");
    const { agent_id } = await w.registerAgent(w.operatorKey);
    // `other` signs an ack naming the wallet: its key is registered, but by `other`.
    const refused = storeAgreement(w, { mandates: [mandate(agent_id, "i1")], parties: [], transform: (a) => forged(a, walletOrg, other.signer) });
    await expect(refused).rejects.toMatchObject({ code: "ACK_KEY_UNREGISTERED" });
  });

  it("ack-key routes: payment-side organizations only, per organization, 404 for another organization's key", async () => {
    const operatorAnswer = await w.call("POST", `/v1/orgs/${w.operatorOrg}/ack-keys`, w.operatorKey, { public_key: generateSigner().publicJwk });
    expect(operatorAnswer).toMatchObject({ status: 403, body: { error: "acknowledgement keys are registered by payment-side organizations" } });
    const a = await paymentParty(w, "merchant", "merchant");
    const b = await paymentParty(w, "merchant", "merchant");
    // The same public key in two organizations is no conflict; twice in one is a 409.
    expect((await w.call("POST", `/v1/orgs/${b.orgId}/ack-keys`, b.key, { public_key: a.signer.publicJwk })).status).toBe(201);
    expect((await w.call("POST", `/v1/orgs/${a.orgId}/ack-keys`, a.key, { public_key: a.signer.publicJwk })).status).toBe(409);
    expect((await w.call("POST", `/v1/orgs/${a.orgId}/ack-keys`, b.key, { public_key: generateSigner().publicJwk })).status).toBe(404);
    expect((await w.call("POST", `/v1/orgs/${a.orgId}/ack-keys`, a.key, { public_key: { ...generateSigner().publicJwk, d: "AAAA" } })).status).toBe(400);
    const list = await w.call("GET", `/v1/orgs/${a.orgId}/ack-keys`, a.key);
    expect((list.body.keys as unknown[]).length).toBe(1);
  });

  it("the store refuses in the caller's transaction and writes nothing", async () => {
    const walletOrg = await w.createOrg("wallet");
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreement } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    const bad = await forged(agreement, walletOrg);
    await expect(withTransaction(w.db.pool, (c) => upsertAgreement(c, bad, { orgId: w.operatorOrg }))).rejects.toMatchObject({ code: "ACK_KEY_UNREGISTERED" });
    const { rows } = await w.db.pool.query<{ record: IntentAgreement }>("SELECT record FROM agreements WHERE agreement_id = $1", [agreement.agreement_id]);
    expect(rows[0]?.record.acknowledgements?.some((k) => k.id === walletOrg)).toBe(false);
  });
});
