/**
 * Ids and keys another tenant can no longer squat (issue 27, hole 11):
 * - an issuer key `kid` is unique within its organization: a wallet that registered the kid
 *   first does not block another wallet, and a mandate naming the kid verifies with the key
 *   whose signature fits;
 * - an agent key, or an issuer key, registered by another tenant without proof (a squat) is
 *   displaced by a registration that proves possession of the key (`key_proof`); a bad proof is
 *   a 400;
 * - an agreement or delegation id is claimed per organization: two agents of two organizations
 *   declare the same ids (another organization's declaration no longer 409s the rightful one),
 *   each spends within its own budgets, and a revocation by one organization (over the API, in
 *   the portal, a pushed principal revocation, the controller's) never reaches the other's
 *   record; a party that sees both names agent_id.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSigner, keyId, type Signer } from "../../src/core/jose/index.js";
import { AGENT_POP_TYP, signAgentPop, signIssuerKeyPop } from "../../src/core/registry/index.js";
import { signRecord } from "../../src/core/jose/index.js";
import { mandateHash, signRevocation } from "../../src/core/agreement/index.js";
import { claimRecord } from "../../src/store/record-owners.js";
import { registerPrincipalEmail } from "../../src/store/portal.js";
import { principalKey } from "../fixtures/records.js";
import { openPaymentMandateClaims, presentMandate } from "../helpers/ap2-mandates.js";
import { signPush } from "../helpers/revocation-push.js";
import { action, mandate, startVerifyWorld, storeAgreement, uid, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
const notifier = generateSigner();

beforeAll(async () => {
  w = await startVerifyWorld({ SVC_PUSH_NOTIFIER_JWK: JSON.stringify(notifier.publicJwk), BUR_DEV_MAILBOX: "1" });
});
afterAll(async () => {
  await w?.close();
});

const sec = (ms: number): number => Math.floor(ms / 1000);

/** A registration body of `agentId` with `key`'s public half, proven by `prover` when given. */
async function registration(orgId: string, agentId: string, key: Signer, proof?: { by?: Signer; over?: Record<string, unknown> }) {
  const body: Record<string, unknown> = { agent_id: agentId, principal_id: "prn_scoped", verification_level: "operator_verified", public_key: key.publicJwk };
  if (proof) {
    const fields = { org_id: orgId, agent_id: agentId, fingerprint: keyId(key.publicJwk), at: new Date().toISOString(), ...proof.over };
    body.key_proof = await signAgentPop(fields as never, proof.by ?? key);
  }
  return body;
}

describe("issuer key kids are per organization", () => {
  it("another wallet's kid does not block this wallet, and a mandate naming it verifies with this wallet's key", async () => {
    const squatter = await w.createOrg("wallet");
    const squatterKey = (await w.issueKey(squatter)).token;
    const rightful = await w.createOrg("wallet");
    const rightfulKey = (await w.issueKey(rightful)).token;
    const kid = uid("wallet-kid");
    const mine = generateSigner("ES256");
    expect((await w.call("POST", `/v1/orgs/${squatter}/issuer-keys`, squatterKey, { public_key: { ...generateSigner().publicJwk, kid } })).status).toBe(201);
    const reg = await w.call("POST", `/v1/orgs/${rightful}/issuer-keys`, rightfulKey, { public_key: { ...mine.publicJwk, kid } });
    expect(reg).toMatchObject({ status: 201, body: { kid, org_id: rightful } });
    // Still one kid per organization, and one organization per key.
    expect((await w.call("POST", `/v1/orgs/${rightful}/issuer-keys`, rightfulKey, { public_key: { ...generateSigner().publicJwk, kid } })).status).toBe(409);
    expect((await w.call("POST", `/v1/orgs/${squatter}/issuer-keys`, squatterKey, { public_key: { ...mine.publicJwk, kid: uid("other") } })).status).toBe(409);

    const agentKey = generateSigner("EdDSA");
    const { agent_id } = await w.registerAgent(w.operatorKey, { public_key: agentKey.publicJwk });
    const now = Date.now();
    const sdJwt = await presentMandate({
      issuer: mine,
      holder: agentKey,
      kid,
      audience: "writ",
      nonce: "n-1",
      kbIatSec: sec(now),
      claims: openPaymentMandateClaims(agentKey, { iatSec: sec(now) - 10, expSec: sec(now) + 3600 }),
    });
    const r = await w.call("POST", "/v1/mandates", w.operatorKey, { agent_id, sd_jwt: sdJwt, nonce: "n-1" });
    expect(r).toMatchObject({ status: 201, body: { issuer_kid: kid } });
    const { rows } = await w.db.pool.query<{ issuer_org_id: string }>("SELECT issuer_org_id FROM mandates WHERE delegation_id = $1", [r.body.delegation_id]);
    expect(rows[0]?.issuer_org_id).toBe(rightful);
  });
});

describe("issuer keys: a proven registration wins over another wallet's unproven squat", () => {
  it("the squat is revoked and marked displaced; a bad proof is a 400; a proven holder stays", async () => {
    const squatter = await w.createOrg("wallet");
    const squatterKey = (await w.issueKey(squatter)).token;
    const rightful = await w.createOrg("wallet");
    const rightfulKey = (await w.issueKey(rightful)).token;
    const issuer = generateSigner("ES256");
    const thumbprint = keyId(issuer.publicJwk);
    const proof = (org: string, by: Signer = issuer) => signIssuerKeyPop({ org_id: org, thumbprint, at: new Date().toISOString() }, by);
    expect((await w.call("POST", `/v1/orgs/${squatter}/issuer-keys`, squatterKey, { public_key: issuer.publicJwk })).status).toBe(201);
    expect(await w.call("POST", `/v1/orgs/${rightful}/issuer-keys`, rightfulKey, { public_key: issuer.publicJwk })).toMatchObject({
      status: 409,
      body: { error: "issuer key is already registered" },
    });
    const bad = await w.call("POST", `/v1/orgs/${rightful}/issuer-keys`, rightfulKey, {
      public_key: issuer.publicJwk,
      key_proof: await proof(rightful, generateSigner("ES256")),
    });
    expect(bad.status).toBe(400);
    expect(String(bad.body.error)).toMatch(/^key_proof: /);
    expect(
      (await w.call("POST", `/v1/orgs/${rightful}/issuer-keys`, rightfulKey, { public_key: issuer.publicJwk, key_proof: await proof(squatter) })).status,
    ).toBe(400);

    const won = await w.call("POST", `/v1/orgs/${rightful}/issuer-keys`, rightfulKey, { public_key: issuer.publicJwk, key_proof: await proof(rightful) });
    expect(won).toMatchObject({
      status: 201,
      body: { org_id: rightful, thumbprint, key_proven: true, revoked_at: null, displaced: { org_id: squatter, kid: thumbprint } },
    });
    const theirs = (await w.call("GET", `/v1/orgs/${squatter}/issuer-keys`, squatterKey)).body.keys as Array<Record<string, unknown>>;
    expect(theirs).toEqual([expect.objectContaining({ thumbprint, displaced_by: rightful, revoked_at: expect.any(String) })]);
    // The squatter cannot take it back, with or without a proof it cannot make.
    expect((await w.call("POST", `/v1/orgs/${squatter}/issuer-keys`, squatterKey, { public_key: { ...issuer.publicJwk, kid: uid("k") } })).status).toBe(409);
    expect(
      (
        await w.call("POST", `/v1/orgs/${squatter}/issuer-keys`, squatterKey, {
          public_key: { ...issuer.publicJwk, kid: uid("k") },
          key_proof: await proof(squatter, generateSigner("ES256")),
        })
      ).status,
    ).toBe(400);

    // A mandate signed with the key is issued by the wallet that proved it.
    const agentKey = generateSigner("EdDSA");
    const { agent_id } = await w.registerAgent(w.operatorKey, { public_key: agentKey.publicJwk });
    const now = Date.now();
    const sdJwt = await presentMandate({
      issuer,
      holder: agentKey,
      audience: "writ",
      nonce: "n-2",
      kbIatSec: sec(now),
      claims: openPaymentMandateClaims(agentKey, { iatSec: sec(now) - 10, expSec: sec(now) + 3600 }),
    });
    const r = await w.call("POST", "/v1/mandates", w.operatorKey, { agent_id, sd_jwt: sdJwt, nonce: "n-2" });
    expect(r.status).toBe(201);
    const { rows } = await w.db.pool.query<{ issuer_org_id: string }>("SELECT issuer_org_id FROM mandates WHERE delegation_id = $1", [r.body.delegation_id]);
    expect(rows[0]?.issuer_org_id).toBe(rightful);
  });
});

describe("agent keys: a proven registration wins over an unproven squat", () => {
  it("tenant B's unproven registration of A's key is displaced by A's proven one", async () => {
    const tenantB = await w.createOrg("agent_operator");
    const keyB = (await w.issueKey(tenantB)).token;
    const agentKey = generateSigner();
    const squatId = uid("squat");
    const squat = await w.call("POST", "/v1/agents", keyB, await registration(tenantB, squatId, agentKey));
    expect(squat.status).toBe(201);
    expect(squat.body).not.toHaveProperty("key_proven");

    // Without a proof, A still gets the 409 of a taken key.
    const ownId = uid("mine");
    expect(await w.call("POST", "/v1/agents", w.operatorKey, await registration(w.operatorOrg, ownId, agentKey))).toMatchObject({
      status: 409,
      body: { error: "agent public key is already registered" },
    });
    // With one, A's registration wins and B's is displaced.
    const proven = await w.call("POST", "/v1/agents", w.operatorKey, await registration(w.operatorOrg, ownId, agentKey, {}));
    expect(proven).toMatchObject({ status: 201, body: { agent_id: ownId, status: "active", key_proven: true, displaced_agent_id: squatId } });

    const displaced = await w.call("GET", `/v1/agents/${squatId}`, keyB);
    expect(displaced.body).toMatchObject({ status: "suspended", displaced_by: ownId });
    expect((await w.call("GET", `/v1/agents/${ownId}`, w.operatorKey)).body).toMatchObject({ status: "active", key_proven: true });
    expect(await w.call("PATCH", `/v1/agents/${squatId}`, keyB, { status: "active" })).toMatchObject({
      status: 409,
      body: { error: "agent was displaced by a proven registration of its key and cannot be made active" },
    });
    // Verify refuses the displaced agent; the key's owner verifies under its own agent id.
    const keyBVerify = await w.call("POST", "/v1/verify", keyB, { agent_id: squatId, action: action() });
    expect(keyBVerify.body.reasons).toContain("AGENT_NOT_ACTIVE");
    // B can squat again neither without a proof nor with a proof it cannot make.
    expect((await w.call("POST", "/v1/agents", keyB, await registration(tenantB, uid("again"), agentKey))).status).toBe(409);
    expect((await w.call("POST", "/v1/agents", keyB, await registration(tenantB, uid("again"), agentKey, { by: generateSigner() }))).status).toBe(400);
    // A proven holder is never displaced, also not by another proven registration.
    expect(await w.call("POST", "/v1/agents", w.operatorKey, await registration(w.operatorOrg, uid("twice"), agentKey, {}))).toMatchObject({
      status: 409,
      body: { error: "agent public key is already registered" },
    });
    // The registration log records the proven key.
    const head = await w.call("GET", "/v1/log/head");
    const size = Number(head.body.tree_size);
    const entries = await Promise.all([size - 1, size].map((n) => w.call("GET", `/v1/log/entries/${n}`)));
    const logged = entries
      .map((e) => e.body.entry as { kind: string; body: Record<string, unknown> })
      .find((e) => e.kind === "registration" && e.body.agent_id === ownId);
    expect(logged?.body).toMatchObject({ key_proven: true, fingerprint: keyId(agentKey.publicJwk) });
  });

  it("a bad proof is a 400 naming what is wrong, and registers nothing", async () => {
    const agentKey = generateSigner();
    const id = uid("bad");
    const org = w.operatorOrg;
    const cases: Array<[string, Record<string, unknown>]> = [
      ["another key signed it", await registration(org, id, agentKey, { by: generateSigner() })],
      ["another organization", await registration(org, id, agentKey, { over: { org_id: "org_000000000000000000000000" } })],
      ["another agent id", await registration(org, id, agentKey, { over: { agent_id: "someone-else" } })],
      ["another key's fingerprint", await registration(org, id, agentKey, { over: { fingerprint: keyId(generateSigner().publicJwk) } })],
      ["an old proof", await registration(org, id, agentKey, { over: { at: new Date(Date.now() - 3600_000).toISOString() } })],
    ];
    const wrongTyp = await registration(org, id, agentKey);
    const fields = { svc_agent_pop: 1, org_id: org, agent_id: id, fingerprint: keyId(agentKey.publicJwk), at: new Date().toISOString() };
    wrongTyp.key_proof = { ...fields, signature: await signRecord(fields, agentKey, "svc-ack+jws") };
    cases.push(["a wrong typ", wrongTyp]);
    cases.push(["not an object", { ...(await registration(org, id, agentKey)), key_proof: "proof" }]);
    for (const [what, body] of cases) {
      const r = await w.call("POST", "/v1/agents", w.operatorKey, body);
      expect(r.status, what).toBe(400);
      expect(String(r.body.error), what).toMatch(/key_proof/);
    }
    expect(AGENT_POP_TYP).toBe("svc-agent-pop+jws");
    expect((await w.call("GET", `/v1/agents/${id}`, w.operatorKey)).status).toBe(404);
  });
});

describe("one agreement and delegation id held by two agents of two organizations", () => {
  it("each agent's rows are read by its own key: both ALLOW within their own budgets, and neither sees the other's spend", async () => {
    const orgB = await w.createOrg("agent_operator");
    const keyB = (await w.issueKey(orgB)).token;
    const agentA = (await w.registerAgent(w.operatorKey)).agent_id;
    const agentB = (await w.registerAgent(keyB)).agent_id;
    const agreementId = uid("agr-shared");
    const delegationId = uid("del-shared");
    const declare = (agentId: string, orgId: string) =>
      storeAgreement(w, {
        agreementId,
        delegation: { id: delegationId, scope: { cumulative_maximum: 20 } },
        mandates: [mandate(agentId, "i1", { cumulative_maximum: 20 })],
        orgId,
      });
    // Ids are claimed per organization: B declares the ids A holds, and both are stored.
    await declare(agentA, w.operatorOrg);
    await declare(agentB, orgB);
    const { rows } = await w.db.pool.query<{ agent_id: string }>("SELECT agent_id FROM agreements WHERE agreement_id = $1 ORDER BY agent_id", [agreementId]);
    expect(rows.map((r) => r.agent_id)).toEqual([agentA, agentB].sort());

    for (let i = 0; i < 2; i++) {
      const r = await w.verify({ agent_id: agentA, action: action() });
      expect(r.body.verdict, JSON.stringify(r.body)).toBe("ALLOW");
    }
    expect((await w.verify({ agent_id: agentA, action: action() })).body.verdict).toBe("DENY");
    // B's budgets (the mandate's and the delegation's cumulative maximum) are its own: A's 20 spent count for nothing.
    for (let i = 0; i < 2; i++) {
      const r = await w.verify({ agent_id: agentB, action: action() }, keyB);
      expect(r.body.verdict, JSON.stringify(r.body)).toBe("ALLOW");
    }
    expect((await w.verify({ agent_id: agentB, action: action() }, keyB)).body.verdict).toBe("DENY");
    const spent = await w.db.pool.query<{ agent_id: string; spent_minor: string }>(
      "SELECT agent_id, spent_minor::text AS spent_minor FROM agreement_spend WHERE agreement_id = $1 ORDER BY agent_id",
      [agreementId],
    );
    expect(spent.rows).toEqual([agentA, agentB].sort().map((agent_id) => ({ agent_id, spent_minor: "2000" })));
  });

  it("each organization reads its own record; a party of both names agent_id (409 without it); an outcome touches only the named agent's ledger", async () => {
    const orgB = await w.createOrg("agent_operator");
    const keyB = (await w.issueKey(orgB)).token;
    const agentA = (await w.registerAgent(w.operatorKey)).agent_id;
    const agentB = (await w.registerAgent(keyB)).agent_id;
    const agreementId = uid("agr-shared");
    const delegationId = uid("del-shared");
    const declare = (agentId: string, orgId: string) =>
      storeAgreement(w, { agreementId, delegation: { id: delegationId }, mandates: [mandate(agentId, "i1", { cumulative_maximum: 50 })], orgId });
    await declare(agentA, w.operatorOrg);
    await declare(agentB, orgB);
    const actA = action();
    const actB = action();
    expect((await w.verify({ agent_id: agentA, action: actA })).body.verdict).toBe("ALLOW");
    expect((await w.verify({ agent_id: agentB, action: actB }, keyB)).body.verdict).toBe("ALLOW");

    // The owners read their own records by the id alone.
    for (const [key, agent] of [
      [w.operatorKey, agentA],
      [keyB, agentB],
    ] as const) {
      expect(await w.call("GET", `/v1/agreements/${agreementId}`, key)).toMatchObject({ status: 200, body: { agent_id: agent, ledger_sequence: 1 } });
      expect(await w.call("GET", `/v1/delegations/${delegationId}`, key)).toMatchObject({ status: 200, body: { agent_id: agent } });
      const page = await w.call("GET", `/v1/agreements/${agreementId}/ledger`, key);
      expect(page.body.entries).toEqual([expect.objectContaining({ action_id: agent === agentA ? actA.action_id : actB.action_id })]);
    }
    // Naming the other organization's agent shows nothing.
    expect((await w.call("GET", `/v1/agreements/${agreementId}?agent_id=${agentB}`, w.operatorKey)).status).toBe(404);

    // The payment party acknowledged both: it names the agent.
    const ambiguous = await w.call("GET", `/v1/agreements/${agreementId}`, w.psp.key);
    expect(ambiguous).toMatchObject({ status: 409, body: { error: "the id names agreements of several agents; name agent_id" } });
    expect(await w.call("GET", `/v1/agreements/${agreementId}?agent_id=${agentB}`, w.psp.key)).toMatchObject({ status: 200, body: { agent_id: agentB } });
    expect(await w.outcome({ agreement_id: agreementId, action_id: actB.action_id, outcome: "failed" }, w.psp.key)).toMatchObject({
      status: 409,
      body: { error: "the id names agreements of several agents; name agent_id" },
    });
    expect(await w.outcome({ agreement_id: agreementId, agent_id: agentB, action_id: actB.action_id, outcome: "failed" }, w.psp.key)).toMatchObject({
      status: 200,
      body: { outcome: "failed", replayed: false },
    });
    // B's release freed B's spend only.
    const spent = await w.db.pool.query<{ agent_id: string; spent_minor: string }>(
      "SELECT agent_id, spent_minor::text AS spent_minor FROM agreement_spend WHERE agreement_id = $1 ORDER BY agent_id",
      [agreementId],
    );
    expect(Object.fromEntries(spent.rows.map((r) => [r.agent_id, r.spent_minor]))).toEqual({ [agentA]: "1000", [agentB]: "0" });
    expect((await w.call("GET", `/v1/agreements/${agreementId}/ledger`, w.operatorKey)).body.entries).toHaveLength(1);
  });
});

/** Two agents of two organizations (A: the operator's, B: a new one) each holding `agreementId` and `delegationId`. */
async function twoHolders(opts: { principalId?: string; delegation?: boolean } = {}) {
  const orgB = await w.createOrg("agent_operator");
  const keyB = (await w.issueKey(orgB)).token;
  const over = opts.principalId ? { principal_id: opts.principalId } : {};
  const agentA = (await w.registerAgent(w.operatorKey, over)).agent_id;
  const agentB = (await w.registerAgent(keyB, over)).agent_id;
  const agreementId = uid("agr-two");
  const delegationId = uid("del-two");
  const declare = (agentId: string, orgId: string) =>
    storeAgreement(w, {
      agreementId,
      ...(opts.delegation === false ? { delegation: false as const } : { delegation: { id: delegationId } }),
      mandates: [mandate(agentId, "i1", { cumulative_maximum: 500 })],
      orgId,
    });
  // B declares first: the id it holds does not keep A from declaring it in A's organization.
  const b = await declare(agentB, orgB);
  const a = await declare(agentA, w.operatorOrg);
  const allows = async (agentId: string, key: string) => (await w.verify({ agent_id: agentId, action: action() }, key)).body.verdict === "ALLOW";
  expect([await allows(agentA, w.operatorKey), await allows(agentB, keyB)]).toEqual([true, true]);
  return { orgB, keyB, agentA, agentB, agreementId, delegationId, a, b, allows };
}

describe("revocations of an id two organizations hold reach the revoking organization's record only", () => {
  it("over the API: an organization's key revokes its own; the admin names agent_id (409 without it)", async () => {
    const t = await twoHolders();
    const r = await w.call("DELETE", `/svc/delegations/${t.delegationId}`, t.keyB, {});
    expect(r).toMatchObject({ status: 200, body: { revoked: true, revoked_ids: [t.delegationId], agreement_ids: [t.agreementId] } });
    expect([await t.allows(t.agentA, w.operatorKey), await t.allows(t.agentB, t.keyB)]).toEqual([true, false]);
    expect(await w.call("GET", `/v1/delegations/${t.delegationId}`, w.operatorKey)).toMatchObject({
      status: 200,
      body: { agent_id: t.agentA, status: "active" },
    });
    expect(await w.call("GET", `/v1/delegations/${t.delegationId}`, t.keyB)).toMatchObject({ status: 200, body: { agent_id: t.agentB, status: "revoked" } });

    const u = await twoHolders();
    expect(await w.call("DELETE", `/svc/delegations/${u.delegationId}`, w.admin, {})).toMatchObject({
      status: 409,
      body: { error: "the id names delegations of several agents; name agent_id" },
    });
    const named = await w.call("DELETE", `/svc/delegations/${u.delegationId}?agent_id=${u.agentA}`, w.admin, {});
    expect(named).toMatchObject({ status: 200, body: { revoked: true, revoked_ids: [u.delegationId] } });
    expect([await u.allows(u.agentA, w.operatorKey), await u.allows(u.agentB, u.keyB)]).toEqual([false, true]);
    // An agent that holds no delegation under the id: not found.
    expect((await w.call("DELETE", `/svc/delegations/${u.delegationId}?agent_id=${uid("nobody")}`, w.admin, {})).status).toBe(404);
    // Another organization's key names the other agent: not found, as for an unknown id.
    expect((await w.call("DELETE", `/svc/delegations/${u.delegationId}?agent_id=${u.agentB}`, w.operatorKey, {})).status).toBe(404);
  });

  it("in the portal: a principal whose agents of both organizations hold the id names agent_id, and revokes that one", async () => {
    const principalId = `prn_${uid("two").replace(/[^A-Za-z0-9_-]/g, "")}`.slice(0, 60);
    const email = `${principalId.toLowerCase()}@example.test`;
    await registerPrincipalEmail(w.db.pool, principalId, email);
    const t = await twoHolders({ principalId });
    expect((await w.call("POST", "/v1/portal/magic-link", null, { email })).body).toEqual({ sent: true });
    const mail = await w.call("GET", "/v1/dev/mailbox");
    const session = (await w.call("POST", "/v1/sessions", null, { token: mail.body.token })).body.session_token as string;
    expect(await w.call("POST", `/v1/portal/delegations/${t.delegationId}/revoke`, session, {})).toMatchObject({
      status: 409,
      body: { error: "the id names delegations of several agents; name agent_id" },
    });
    const r = await w.call("POST", `/v1/portal/delegations/${t.delegationId}/revoke`, session, { agent_id: t.agentB });
    expect(r).toMatchObject({ status: 200, body: { revoked: true, revoked_ids: [t.delegationId] } });
    expect([await t.allows(t.agentA, w.operatorKey), await t.allows(t.agentB, t.keyB)]).toEqual([true, false]);
  });

  it("a pushed principal revocation: its mandate hash names the agreement; the feed shows it once, the other organization's agreement stays live", async () => {
    const t = await twoHolders({ delegation: false });
    const revocation = await signRevocation(t.a.agreement, { reason: "principal revoked", at: new Date().toISOString() }, principalKey);
    expect(revocation.mandate_hash).toBe(mandateHash(t.a.agreement.mandates[0] as never));
    expect(revocation.mandate_hash).not.toBe(mandateHash(t.b.agreement.mandates[0] as never));
    const pushed = await w.call("POST", "/v1/revocations/push", null, await signPush(revocation, notifier));
    expect(pushed).toMatchObject({ status: 200, body: { stored: true } });
    expect([await t.allows(t.agentA, w.operatorKey), await t.allows(t.agentB, t.keyB)]).toEqual([false, true]);
    const feed = (await w.call("GET", `/v1/revocations?after=${Number(pushed.body.sequence) - 1}`)).body.revocations as Array<Record<string, unknown>>;
    expect(feed).toEqual([{ sequence: pushed.body.sequence, revocation_id: expect.any(String), received_at: expect.any(String), revocation }]);
    const { rows } = await w.db.pool.query("SELECT agent_id, org_id FROM revocations WHERE agreement_id = $1", [t.agreementId]);
    expect(rows).toEqual([{ agent_id: t.agentA, org_id: w.operatorOrg }]);
    expect(await w.call("GET", `/v1/agreements/${t.agreementId}`, t.keyB)).toMatchObject({ status: 200, body: { agent_id: t.agentB } });
    expect((await w.call("GET", `/v1/agreements/${t.agreementId}`, t.keyB)).body.revocation ?? null).toBeNull();
  });

  it("the controller's: each organization's resource owns its record, and a deletion revokes that organization's only", async () => {
    const t = await twoHolders();
    const owner = (ns: string) => ({ namespace: ns, name: "grant", uid: `Delegation/${ns}/grant` });
    expect(await claimRecord(w.db.pool, "delegation", t.delegationId, owner("a"), w.operatorOrg)).toEqual({ ok: true, claimedNow: true });
    expect(await claimRecord(w.db.pool, "delegation", t.delegationId, owner("b"), t.orgB)).toEqual({ ok: true, claimedNow: true });
    // What finalize does for B's resource: revoke the record of B's organization.
    const { withTransaction } = await import("../../src/store/pool.js");
    const { revokeAndRecord } = await import("../../src/store/revocation/record.js");
    const r = await withTransaction(w.db.pool, (c) =>
      revokeAndRecord(c, { kind: "delegation", orgId: t.orgB, id: t.delegationId }, { reason: "deleted", by: "policy", at: new Date() }, { signer: null }),
    );
    expect(r).toMatchObject({ ids: [t.delegationId], agreementIds: [t.agreementId] });
    expect([await t.allows(t.agentA, w.operatorKey), await t.allows(t.agentB, t.keyB)]).toEqual([true, false]);
  });
});
