/**
 * AP2 open payment mandates end to end over real HTTP: a wallet registers its issuer key, the
 * agent's operator records a mandate signed in the test (POST /v1/mandates), then
 * POST /v1/verify allows what its constraints allow, refuses more, and refuses everything after
 * `exp`. Refusals of the route name their reason.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sign } from "node:crypto";
import { P256_ORDER } from "../../src/core/jose/canonical-forms.js";
import { generateSigner, lowS, type Signer } from "../../src/core/jose/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { loadDelegation, upsertDelegation } from "../../src/store/delegations.js";
import { withTransaction } from "../../src/store/pool.js";
import {
  issueMandate,
  issuerJwtSpellings,
  openPaymentMandateClaims,
  presentIssued,
  presentMandate,
  rebind,
  type PresentOptions,
} from "../helpers/ap2-mandates.js";
import { ed25519Jwk, smallOrderEncodings } from "../helpers/ed25519-small-order.js";
import { action, startVerifyWorld, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
let nowMs = Date.now();
let walletOrg: string;
let walletKey: string;
const issuer = generateSigner("ES256");
const agentKey = generateSigner("EdDSA");
let agentId: string;

const sec = (ms: number): number => Math.floor(ms / 1000);

beforeAll(async () => {
  w = await startVerifyWorld({}, { clock: () => new Date(nowMs) });
  walletOrg = await w.createOrg("wallet");
  walletKey = (await w.issueKey(walletOrg)).token;
  const reg = await w.call("POST", `/v1/orgs/${walletOrg}/issuer-keys`, walletKey, { public_key: issuer.publicJwk });
  expect(reg).toMatchObject({ status: 201, body: { kid: issuer.kid, thumbprint: issuer.kid, org_id: walletOrg, revoked_at: null } });
  agentId = (await w.registerAgent(w.operatorKey, { public_key: agentKey.publicJwk })).agent_id;
});
afterAll(async () => {
  await w?.close();
});

function options(over: Partial<PresentOptions> & { expSec?: number } = {}): PresentOptions {
  const { expSec, ...rest } = over;
  return {
    issuer,
    holder: agentKey,
    claims: openPaymentMandateClaims(agentKey, { iatSec: sec(nowMs) - 10, expSec: expSec ?? sec(nowMs) + 3600 }),
    audience: "writ",
    nonce: "nonce-1",
    kbIatSec: sec(nowMs),
    ...rest,
  };
}

const present = (over: Partial<PresentOptions> & { expSec?: number } = {}): Promise<string> => presentMandate(options(over));

const submit = (body: Record<string, unknown>, token: string | null = w.operatorKey) => w.call("POST", "/v1/mandates", token, body);
const shoes = (amount: number) => action({ amount, merchant: "merchant_shoes", proposed_at: new Date(nowMs).toISOString() });

describe("POST /v1/mandates and verify", () => {
  it("records a valid mandate; verify allows an action within its constraints, refuses one above, and refuses all after exp", async () => {
    const issued = await issueMandate(options());
    const r = await submit({ agent_id: agentId, sd_jwt: await presentIssued(issued, options()), nonce: "nonce-1" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      agent_id: agentId,
      issuer_kid: issuer.kid,
      created: true,
      revoked: false,
      expires_at: new Date((sec(nowMs) + 3600) * 1000).toISOString(),
    });
    const delegationId = r.body.delegation_id as string;
    expect(delegationId).toMatch(/^ap2-[0-9a-f]{32}$/);
    expect(r.body.agreement_id).toBe(delegationId);

    // The same mandate again (a new presentation) names the same grant and records nothing.
    const again = await submit({ agent_id: agentId, sd_jwt: await presentIssued(issued, options({ nonce: "nonce-2" })) });
    expect(again).toMatchObject({ status: 200, body: { delegation_id: delegationId, created: false } });

    // Logged once, as an agreement entry naming the mandate.
    const head = await w.call("GET", "/v1/log/head");
    const entry = (await w.call("GET", `/v1/log/entries/${String(head.body.tree_size)}`)).body.entry as Record<string, unknown>;
    expect(entry).toMatchObject({ kind: "agreement", body: { agreement_id: delegationId, delegation_id: delegationId, evidence: "ap2_open_payment_mandate" } });

    const ok = await w.verify({ agent_id: agentId, action: shoes(20) });
    expect(ok.body).toMatchObject({ verdict: "ALLOW", reasons: [], agreement_id: delegationId, intent_id: "mandate", ledger_entry: { sequence: 1 } });

    const above = await w.verify({ agent_id: agentId, action: shoes(60) });
    expect(above.body).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK", agreement_id: delegationId });
    expect(above.body.reasons).toContain("AMOUNT_ABOVE_DELEGATION_CEILING");

    // Single use: the cumulative maximum is one payment's ceiling (50), 20 of it spent.
    const budget = await w.verify({ agent_id: agentId, action: shoes(40) });
    expect(budget.body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });
    const elsewhere = await w.verify({
      agent_id: agentId,
      action: action({ amount: 5, merchant: "merchant_hats", proposed_at: new Date(nowMs).toISOString() }),
    });
    expect(elsewhere.body.reasons).toContain("MERCHANT_NOT_IN_SCOPE");

    // The recorded rows cannot be replaced by a declared delegation or agreement.
    const stored = await loadDelegation(w.db.pool, delegationId);
    if (!stored) throw new Error("the mandate's delegation is not stored");
    await expect(withTransaction(w.db.pool, (c) => upsertDelegation(c, { ...stored.record, purpose: "declared over it" }))).rejects.toMatchObject({
      code: "RECORD_INVALID",
    });
    const ledger = await loadAgreementWithLedger(w.db.pool, delegationId);
    if (!ledger) throw new Error("the mandate's ledger agreement is not stored");
    expect(ledger).toMatchObject({
      status: "active",
      ledger_sequence: 1,
      mandates: [{ intent_id: "mandate", currency: "USD", maximum_amount: 50, merchants: ["merchant_shoes"] }],
    });
    await expect(withTransaction(w.db.pool, (c) => upsertAgreement(c, ledger))).rejects.toMatchObject({ code: "RECORD_INVALID" });

    nowMs += 3601_000;
    const late = await w.verify({ agent_id: agentId, action: shoes(5) });
    expect(late.body).toMatchObject({ verdict: "DENY", agreement_id: delegationId });
    expect(late.body.reasons).toContain("DELEGATION_EXPIRED");
    // And a new presentation of it is refused: exp has passed.
    const refused = await submit({ agent_id: agentId, sd_jwt: await present({ expSec: sec(nowMs) - 1 }) });
    expect(refused).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^mandate refused: MANDATE_EXPIRED: exp .* is not in the future$/) } });
  });

  it("refuses a raised claim, a key-binding JWT from another key, an unknown issuer, a wrong audience and another operator's agent", async () => {
    const text = await present();
    const [jwt, ...rest] = text.split("~");
    const disclosures = rest.slice(0, -1).map((d) => {
      const arr = JSON.parse(Buffer.from(d, "base64url").toString("utf8")) as [string, Record<string, unknown>];
      return arr[1].type === "payment.amount_range" ? Buffer.from(JSON.stringify([arr[0], { ...arr[1], max: 999999 }])).toString("base64url") : d;
    });
    const raised = [jwt, ...disclosures, rest.at(-1)].join("~");
    expect(await submit({ agent_id: agentId, sd_jwt: raised })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^mandate refused: DISCLOSURE_(MISSING|UNREFERENCED): /) },
    });

    const stranger: Signer = generateSigner("EdDSA");
    expect(await submit({ agent_id: agentId, sd_jwt: await present({ holder: stranger }) })).toMatchObject({
      status: 400,
      body: { error: "mandate refused: KB_JWT_SIGNATURE_INVALID: the key-binding JWT is not signed by the key in cnf" },
    });
    expect(await submit({ agent_id: agentId, sd_jwt: await present({ issuer: generateSigner("ES256") }) })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^mandate refused: ISSUER_UNKNOWN: /) },
    });
    expect(await submit({ agent_id: agentId, sd_jwt: await present({ audience: "https://merchant.example" }) })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^mandate refused: KB_JWT_AUDIENCE_MISMATCH: /) },
    });
    // The presentation made for the merchant is recordable when the request names that audience.
    expect(
      (await submit({ agent_id: agentId, sd_jwt: await present({ audience: "https://merchant.example" }), audience: "https://merchant.example" })).status,
    ).toBe(201);
    expect(await submit({ agent_id: agentId, sd_jwt: text, nonce: "other" })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^mandate refused: KB_JWT_NONCE_MISMATCH: /) },
    });

    const otherOperator = await w.createOrg("agent_operator");
    expect(await submit({ agent_id: agentId, sd_jwt: text }, (await w.issueKey(otherOperator)).token)).toMatchObject({
      status: 403,
      body: { error: "agent belongs to another organization" },
    });
    expect(await submit({ agent_id: "agent-none", sd_jwt: text })).toMatchObject({ status: 404 });
    expect(await submit({ agent_id: agentId, sd_jwt: text }, walletKey)).toMatchObject({
      status: 403,
      body: { error: "API key lacks the scope agents:write" },
    });
    expect((await submit({ agent_id: agentId, sd_jwt: text }, null)).status).toBe(401);
  });

  it("records a mandate in AP2's nested layout with decoys in cnf (issued by @sd-jwt/sd-jwt-vc); a decoy where constraints live, or a withheld payee, is refused as withheld", async () => {
    const claims = openPaymentMandateClaims(agentKey, { iatSec: sec(nowMs) - 10, expSec: sec(nowMs) + 3600 });
    claims.constraints = (claims.constraints as Record<string, unknown>[]).map((c) =>
      c.type === "payment.allowed_payees"
        ? {
            ...c,
            allowed: [
              { id: "merchant_shoes", name: "Shoe Shop" },
              { id: "merchant_socks", name: "Sock Shop" },
            ],
          }
        : c,
    );
    // Decoys in cnf (accepted); a decoy in the payload or a constraint is refused as a withheld claim (below).
    const frame = { cnf: { _sd_decoy: 2 }, constraints: { _sd: [0, 1, 2], 1: { _sd: ["type"], allowed: { _sd: [0, 1] } } } };
    const issued = await issueMandate(options({ claims, frame }));
    for (const [decoyed, where] of [
      [{ ...frame, _sd_decoy: 1 }, "the payload"],
      [{ ...frame, constraints: { ...frame.constraints, 0: { _sd_decoy: 1 } } }, "constraints\\[0\\]"],
    ] as const) {
      const presented = await presentIssued(
        await issueMandate(options({ claims, frame: decoyed })),
        options({ presentationFrame: { constraints: { 0: true, 1: { type: true, allowed: { 0: true, 1: true } }, 2: true } } }),
      );
      expect(await submit({ agent_id: agentId, sd_jwt: presented })).toMatchObject({
        status: 400,
        body: { error: expect.stringMatching(new RegExp(`^mandate refused: DISCLOSURE_MISSING: ${where} has a claim without its disclosure`)) },
      });
    }
    const withheld = await presentIssued(
      issued,
      options({ presentationFrame: { constraints: { 0: true, 1: { type: true, allowed: { 0: true } }, 2: true } } }),
    );
    expect(await submit({ agent_id: agentId, sd_jwt: withheld })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^mandate refused: DISCLOSURE_MISSING: constraints\[1\]\.allowed\[1\] is withheld /) },
    });
    const all = await presentIssued(
      issued,
      options({ presentationFrame: { constraints: { 0: true, 1: { type: true, allowed: { 0: true, 1: true } }, 2: true } } }),
    );
    const r = await submit({ agent_id: agentId, sd_jwt: all });
    expect(r).toMatchObject({ status: 201, body: { created: true } });
    const stored = await loadDelegation(w.db.pool, r.body.delegation_id as string);
    expect(stored?.record.scope).toMatchObject({ currency: "USD", maximum_amount: 50, merchants: ["merchant_shoes", "merchant_socks"] });
  });

  it("issuer keys: wallets only, public keys only, once; a revoked key is no longer trusted", async () => {
    const key = generateSigner("EdDSA");
    const operatorReg = await w.call("POST", `/v1/orgs/${w.operatorOrg}/issuer-keys`, w.operatorKey, { public_key: key.publicJwk });
    expect(operatorReg).toMatchObject({ status: 403, body: { error: "issuer keys are registered by wallet organizations" } });
    const priv = await w.call("POST", `/v1/orgs/${walletOrg}/issuer-keys`, walletKey, { public_key: { ...key.publicJwk, d: "AAAA" } });
    expect(priv).toMatchObject({ status: 400, body: { error: expect.stringContaining("private member") } });
    expect(
      (await w.call("POST", `/v1/orgs/${walletOrg}/issuer-keys`, walletKey, { public_key: { ...key.publicJwk, kid: "wallet-key-2" } })).body,
    ).toMatchObject({ kid: "wallet-key-2" });
    expect((await w.call("POST", `/v1/orgs/${walletOrg}/issuer-keys`, w.admin, { public_key: key.publicJwk })).status).toBe(409);
    const list = await w.call("GET", `/v1/orgs/${walletOrg}/issuer-keys`, walletKey);
    expect((list.body.keys as { kid: string }[]).map((k) => k.kid)).toEqual([issuer.kid, "wallet-key-2"]);

    // A mandate naming kid wallet-key-2 verifies with it, until the key is revoked.
    const mk = () => present({ issuer: key, kid: "wallet-key-2", expSec: sec(nowMs) + 600, kbIatSec: sec(nowMs) });
    expect((await submit({ agent_id: agentId, sd_jwt: await mk() })).status).toBe(201);
    expect((await w.call("DELETE", `/v1/orgs/${walletOrg}/issuer-keys/wallet-key-2`, walletKey)).body).toMatchObject({
      kid: "wallet-key-2",
      revoked_at: expect.any(String),
    });
    const claims = openPaymentMandateClaims(agentKey, { iatSec: sec(nowMs), expSec: sec(nowMs) + 900 });
    expect(await submit({ agent_id: agentId, sd_jwt: await present({ issuer: key, kid: "wallet-key-2", claims }) })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^mandate refused: ISSUER_UNKNOWN: /) },
    });
    expect((await w.call("DELETE", `/v1/orgs/${walletOrg}/issuer-keys/none`, walletKey)).status).toBe(404);
  });

  it("one single-use 50 USD mandate in every spelling of its issuer signature is recorded once and spent once", async () => {
    const buyer = generateSigner("EdDSA");
    const buyerId = (await w.registerAgent(w.operatorKey, { public_key: buyer.publicJwk })).agent_id;
    const o = options({ holder: buyer, claims: openPaymentMandateClaims(buyer, { iatSec: sec(nowMs) - 10, expSec: sec(nowMs) + 3600 }), kbIatSec: sec(nowMs) });
    const issued = await issueMandate(o);
    const sp = issuerJwtSpellings(issued, issuer);
    const record = (jwt: string) => submit({ agent_id: buyerId, sd_jwt: rebind(issued, jwt, o) });

    const first = await record(sp.asIssued);
    expect(first).toMatchObject({ status: 201, body: { created: true } });
    const id = first.body.delegation_id as string;
    for (const jwt of [sp.spareBits, sp.highSSpareBits]) {
      expect(await record(jwt)).toMatchObject({
        status: 400,
        body: { error: expect.stringMatching(/^mandate refused: SD_JWT_MALFORMED: the issuer JWT is not canonical base64url/) },
      });
    }
    // The high-S twin verifies (standard signers give it about every other time) and is the same mandate.
    expect(await record(sp.highS)).toMatchObject({ status: 200, body: { delegation_id: id, created: false } });
    // Another valid signature by the issuer over the same content: the same mandate, nothing written.
    expect(await record(sp.resigned)).toMatchObject({ status: 200, body: { delegation_id: id, created: false } });

    const rows = await w.db.pool.query<{ delegation_id: string; mandate_hash: string }>(
      "SELECT delegation_id, mandate_hash FROM mandates WHERE agent_id = $1",
      [buyerId],
    );
    expect(rows.rows).toEqual([{ delegation_id: id, mandate_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }]);
    const spend = () => w.verify({ agent_id: buyerId, action: shoes(50) });
    expect((await spend()).body).toMatchObject({ verdict: "ALLOW", agreement_id: id });
    expect((await spend()).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });
  });

  it("a mandate whose issuer signature node's crypto made in high S is recorded; its low-S twin is the same single-use mandate", async () => {
    const buyer = generateSigner("EdDSA");
    const buyerId = (await w.registerAgent(w.operatorKey, { public_key: buyer.publicJwk })).agent_id;
    const o = options({ holder: buyer, claims: openPaymentMandateClaims(buyer, { iatSec: sec(nowMs) - 10, expSec: sec(nowMs) + 3600 }), kbIatSec: sec(nowMs) });
    const issued = await issueMandate(o);
    const jwt = issued.split("~")[0] ?? "";
    const input = jwt.slice(0, jwt.lastIndexOf("."));
    // Sign as a standard signer does (node's crypto, no normalisation) until it gives a high S.
    let high: Buffer | undefined;
    for (let i = 0; i < 64 && !high; i++) {
      const raw = sign("sha256", Buffer.from(input, "ascii"), { key: issuer.privateKey, dsaEncoding: "ieee-p1363" });
      if (BigInt(`0x${raw.subarray(32).toString("hex")}`) > P256_ORDER >> 1n) high = raw;
    }
    if (!high) throw new Error("node's crypto gave no high-S signature in 64 tries");
    const highJwt = `${input}.${high.toString("base64url")}`;
    const lowJwt = `${input}.${lowS("ES256", high).toString("base64url")}`;
    const record = (issuerJwt: string) => submit({ agent_id: buyerId, sd_jwt: rebind(issued, issuerJwt, o) });

    const first = await record(highJwt);
    expect(first).toMatchObject({ status: 201, body: { created: true } });
    const id = first.body.delegation_id as string;
    expect(await record(lowJwt)).toMatchObject({ status: 200, body: { delegation_id: id, created: false } });
    const rows = await w.db.pool.query<{ delegation_id: string }>("SELECT delegation_id FROM mandates WHERE agent_id = $1", [buyerId]);
    expect(rows.rows).toEqual([{ delegation_id: id }]);
    const spend = () => w.verify({ agent_id: buyerId, action: shoes(50) });
    expect((await spend()).body).toMatchObject({ verdict: "ALLOW", agreement_id: id });
    expect((await spend()).body).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_BUDGET_EXCEEDED"] });
  });

  it("an issuer key that is a small-order Ed25519 point is refused at registration", async () => {
    for (const x of smallOrderEncodings()) {
      const r = await w.call("POST", `/v1/orgs/${walletOrg}/issuer-keys`, walletKey, { public_key: ed25519Jwk(x) });
      expect(r, x).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^public_key: public key is a small-order point of edwards25519/) } });
    }
  });
});
