import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateSigner } from "../../../../src/core/jose/index.js";
import {
  acceptOpenPaymentMandate,
  decodeMandatePresentation,
  mandateDelegationId,
  verifyMandatePresentation,
  type MandateAgent,
  type MandateVerifyOptions,
  type TrustedIssuerKey,
} from "../../../../src/core/mandates/index.js";
import { prepareDelegation } from "../../../../src/core/delegation/prepare.js";
import {
  decodeSegment,
  encodeSegment,
  issueMandate,
  issuerJwtSpellings,
  jwsSigner,
  openPaymentMandateClaims,
  presentIssued,
  presentMandate,
  rebind,
  validateOpenPaymentMandate,
  type PresentOptions,
} from "../../../helpers/ap2-mandates.js";
import { FIXED_SIGNATURE, IDENTITY_X, ed25519Jwk } from "../../../helpers/ed25519-small-order.js";

const NOW = Date.parse("2026-04-20T10:00:00Z");
const sec = (ms: number): number => Math.floor(ms / 1000);
const wallet = generateSigner("ES256");
const agent = generateSigner("EdDSA");
const stranger = generateSigner("EdDSA");
const AUD = "https://writ.example";
const NONCE = "n-0S6_WzA2Mj";

const trusted: TrustedIssuerKey = { kid: wallet.kid, publicKey: wallet.publicJwk, orgId: "org_wallet" };
const verifyOpts: MandateVerifyOptions = { issuerKeys: [trusted], audience: AUD, nonce: NONCE, now: NOW };
const mandateAgent: MandateAgent = { agentId: "agent-buyer", publicKey: agent.publicJwk, principal: { type: "human", id: "prn_user" } };

function options(over: Partial<PresentOptions> = {}): PresentOptions {
  return {
    issuer: wallet,
    holder: agent,
    claims: openPaymentMandateClaims(agent, { iatSec: sec(NOW) - 60, expSec: sec(NOW) + 3600 }),
    audience: AUD,
    nonce: NONCE,
    kbIatSec: sec(NOW) - 5,
    ...over,
  };
}

const codes = async (text: string, opts: MandateVerifyOptions = verifyOpts): Promise<string[]> =>
  (await verifyMandatePresentation(text, opts)).problems.map((p) => p.code);

/** The parts of a presentation: issuer JWT, disclosures, KB-JWT. */
function split(text: string): { jwt: string; disclosures: string[]; kb: string } {
  const parts = text.split("~");
  return { jwt: parts[0] ?? "", disclosures: parts.slice(1, -1), kb: parts.at(-1) ?? "" };
}
const join = (p: { jwt: string; disclosures: string[]; kb: string }): string => [p.jwt, ...p.disclosures, p.kb].join("~");

describe("verifyMandatePresentation", () => {
  it("verifies a mandate built to the AP2 schema, issued by a trusted wallet key and bound to the agent key", async () => {
    const claims = options().claims;
    expect(validateOpenPaymentMandate(claims), JSON.stringify(validateOpenPaymentMandate.errors)).toBe(true);
    const text = await presentMandate(options());
    const v = await verifyMandatePresentation(text, verifyOpts);
    expect(v.problems).toEqual([]);
    expect(v.issuer).toEqual(trusted);
    expect(v.cnfKey).toEqual(agent.publicJwk);
    expect(v.decoded?.header).toMatchObject({ typ: "dc+sd-jwt", alg: "ES256", kid: wallet.kid });
    expect(v.decoded?.claims).toEqual(claims);
  });

  it("accepts the mandate as a delegation whose scope is the constraint set and whose expiry is exp", async () => {
    const text = await presentMandate(options());
    const a = await acceptOpenPaymentMandate(text, verifyOpts, mandateAgent);
    if (!a.ok) throw new Error(JSON.stringify(a.refusals));
    const decoded = await decodeMandatePresentation(text);
    if ("problem" in decoded) throw new Error(decoded.problem.message);
    expect(a.delegation).toMatchObject({
      delegation_id: mandateDelegationId(decoded.decoded.mandateHash),
      agent: { agent_id: "agent-buyer", public_key: agent.publicJwk },
      principal: { type: "human", id: "prn_user" },
      expires_at: new Date((sec(NOW) + 3600) * 1000).toISOString(),
      scope: { currency: "USD", maximum_amount: 50, cumulative_maximum: 50, merchants: ["merchant_shoes"], action_types: ["purchase"] },
      approval: { type: "HUMAN_APPROVAL", approved_by: "prn_user" },
    });
    expect(prepareDelegation(a.delegation).problems).toEqual([]);
  });

  it("refuses a claim raised after signing: an edited disclosure matches no digest and its constraint is then missing", async () => {
    const text = await presentMandate(options());
    const p = split(text);
    p.disclosures = p.disclosures.map((d) => {
      const arr = JSON.parse(Buffer.from(d, "base64url").toString("utf8")) as [string, Record<string, unknown>];
      if (arr[1].type === "payment.amount_range") arr[1] = { ...arr[1], max: 999999 };
      return encodeSegment(arr);
    });
    const found = await codes(join(p));
    expect(found).toContain("DISCLOSURE_UNREFERENCED");
    expect(found).toContain("DISCLOSURE_MISSING");
    const a = await acceptOpenPaymentMandate(join(p), verifyOpts, mandateAgent);
    expect(a.ok).toBe(false);
  });

  it("refuses a claim raised in the signed payload itself: amount_range.max edited after signing breaks the issuer signature", async () => {
    const text = await presentMandate(options({ frame: {} }));
    const p = split(text);
    const [h, payload, s] = p.jwt.split(".") as [string, string, string];
    const claims = decodeSegment(payload);
    const constraints = claims.constraints as Record<string, unknown>[];
    claims.constraints = constraints.map((c) => (c.type === "payment.amount_range" ? { ...c, max: 999999 } : c));
    p.jwt = [h, encodeSegment(claims), s].join(".");
    const v = await verifyMandatePresentation(join(p), verifyOpts);
    expect(v.problems.map((x) => x.code)).toContain("ISSUER_SIGNATURE_INVALID");
    const a = await acceptOpenPaymentMandate(join(p), verifyOpts, mandateAgent);
    expect(a).toMatchObject({ ok: false, refusals: expect.arrayContaining([expect.objectContaining({ code: "ISSUER_SIGNATURE_INVALID" })]) });
  });

  it("refuses a dropped disclosure: the withheld constraint is named as missing", async () => {
    const text = await presentMandate(options());
    const p = split(text);
    p.disclosures = p.disclosures.filter((d) => !Buffer.from(d, "base64url").toString("utf8").includes("payment.allowed_payees"));
    const v = await verifyMandatePresentation(join(p), verifyOpts);
    expect(v.problems[0]).toMatchObject({ code: "DISCLOSURE_MISSING", message: expect.stringContaining("constraints[1] is withheld") });
  });

  it("refuses a disclosure from another token", async () => {
    const other = split(await presentMandate(options()));
    const p = split(await presentMandate(options()));
    p.disclosures = [...p.disclosures, other.disclosures[0] ?? ""];
    expect(await codes(join(p))).toContain("DISCLOSURE_UNREFERENCED");
  });

  it("refuses a key-binding JWT signed by another key than the one in cnf", async () => {
    const text = await presentMandate(options({ holder: stranger }));
    const v = await verifyMandatePresentation(text, verifyOpts);
    expect(v.problems.map((x) => x.code)).toEqual(["KB_JWT_SIGNATURE_INVALID"]);
  });

  it("refuses a mandate whose cnf is not the registered agent's key", async () => {
    const claims = openPaymentMandateClaims(stranger, { iatSec: sec(NOW) - 60, expSec: sec(NOW) + 3600 });
    const text = await presentMandate(options({ claims, holder: stranger }));
    const a = await acceptOpenPaymentMandate(text, verifyOpts, mandateAgent);
    expect(a).toMatchObject({ ok: false, refusals: [{ code: "CNF_KEY_MISMATCH" }] });
  });

  it("refuses an unknown issuer, and a known kid whose key did not sign", async () => {
    const rogue = generateSigner("ES256");
    expect(await codes(await presentMandate(options({ issuer: rogue })))).toEqual(["ISSUER_UNKNOWN"]);
    expect(await codes(await presentMandate(options({ issuer: rogue, kid: wallet.kid })))).toEqual(["ISSUER_SIGNATURE_INVALID"]);
  });

  it("refuses an expired mandate at import", async () => {
    const claims = openPaymentMandateClaims(agent, { iatSec: sec(NOW) - 7200, expSec: sec(NOW) - 1 });
    const a = await acceptOpenPaymentMandate(await presentMandate(options({ claims })), verifyOpts, mandateAgent);
    expect(a).toMatchObject({ ok: false, refusals: [{ code: "MANDATE_EXPIRED", message: expect.stringContaining("is not in the future") }] });
  });

  it("checks the key binding's audience, nonce, freshness and sd_hash explicitly", async () => {
    expect(await codes(await presentMandate(options({ audience: "https://merchant.example" })))).toEqual(["KB_JWT_AUDIENCE_MISMATCH"]);
    expect(await codes(await presentMandate(options({ nonce: "other" })))).toEqual(["KB_JWT_NONCE_MISMATCH"]);
    expect(await codes(await presentMandate(options({ kbIatSec: sec(NOW) - 301 })))).toEqual(["KB_JWT_STALE"]);
    expect(await codes(await presentMandate(options({ kbIatSec: sec(NOW) + 120 })))).toEqual(["KB_JWT_STALE"]);
    // Without an expected nonce any non-empty nonce is accepted (the window still bounds replay).
    expect(await codes(await presentMandate(options({ nonce: "whatever" })), { ...verifyOpts, nonce: undefined })).toEqual([]);
    const a = split(await presentMandate(options()));
    const b = split(await presentMandate(options()));
    expect(await codes(join({ ...a, kb: b.kb }))).toEqual(["KB_JWT_SD_HASH_MISMATCH"]);
  });

  it("refuses a presentation without a key-binding JWT", async () => {
    const p = split(await presentMandate(options()));
    expect(await codes(join({ ...p, kb: "" }))).toEqual(["KB_JWT_MISSING"]);
  });

  it("refuses alg none, other algorithms, a wrong typ and key-carrying headers", async () => {
    const p = split(await presentMandate(options()));
    const [h, payload, s] = p.jwt.split(".") as [string, string, string];
    const header = decodeSegment(h);
    const withHeader = (over: Record<string, unknown>, sig = s) => join({ ...p, jwt: [encodeSegment({ ...header, ...over }), payload, sig].join(".") });
    expect(await codes(withHeader({ alg: "none" }, ""))).toEqual(expect.arrayContaining(["ISSUER_HEADER_INVALID"]));
    expect(await codes(withHeader({ alg: "HS256" }))).toContain("ISSUER_HEADER_INVALID");
    expect(await codes(withHeader({ typ: "JWT" }))).toContain("ISSUER_TYP_INVALID");
    expect(await codes(withHeader({ jwk: wallet.publicJwk }))).toContain("ISSUER_HEADER_INVALID");
    expect(await codes(withHeader({ kid: undefined }))).toContain("ISSUER_HEADER_INVALID");
  });

  it("re-signed with the right key but a private JWK in cnf is refused", async () => {
    const claims = { ...options().claims, cnf: { jwk: { ...agent.publicJwk, d: "AAAA" } } };
    expect(await codes(await presentMandate(options({ claims })))).toContain("CNF_INVALID");
  });

  it("refuses a key-binding JWT with a non-kb+jwt typ", async () => {
    const p = split(await presentMandate(options()));
    const [kh, kp] = p.kb.split(".") as [string, string, string];
    const header = encodeSegment({ ...decodeSegment(kh), typ: "JWT" });
    const sig = jwsSigner(agent)(`${header}.${kp}`);
    expect(await codes(join({ ...p, kb: `${header}.${kp}.${sig}` }))).toEqual(["KB_JWT_INVALID"]);
  });

  it("refuses what is not an SD-JWT", async () => {
    for (const bad of [undefined, "", "abc", "a.b~", "~x~", "x".repeat(70_000)]) {
      expect((await verifyMandatePresentation(bad, verifyOpts)).problems.map((x) => x.code)).toEqual(["SD_JWT_MALFORMED"]);
    }
  });
});

describe("hostile presentations", () => {
  it("a deeply nested signed payload is refused, not walked to a stack overflow", async () => {
    const depth = 15_000;
    const header = encodeSegment({ alg: "ES256", typ: "dc+sd-jwt", kid: wallet.kid });
    const payload = Buffer.from(`{"vct":"mandate.payment.open.1","deep":${"[".repeat(depth)}1${"]".repeat(depth)}}`).toString("base64url");
    const signingInput = `${header}.${payload}`;
    const text = `${signingInput}.${jwsSigner(wallet)(signingInput)}~`;
    const v = await verifyMandatePresentation(text, verifyOpts);
    expect(v.problems.map((p) => p.code)).toContain("DISCLOSURE_INVALID");
  });
});

describe("one mandate, one identity (issue 27, hole 3)", () => {
  const rebound = (issued: string, jwt: string): string => rebind(issued, jwt, options());

  it("the spellings of one issuer signature: spare bits are refused, the high-S twin is the same mandate; another valid signature over the same content names the same grant", async () => {
    const issued = await issueMandate(options());
    const sp = issuerJwtSpellings(issued, wallet);
    const accepted = await acceptOpenPaymentMandate(rebound(issued, sp.asIssued), verifyOpts, mandateAgent);
    if (!accepted.ok) throw new Error(JSON.stringify(accepted.refusals));

    // Spare bits set in the signature's last character: refused before any key (and by decode, which the controller uses).
    for (const jwt of [sp.spareBits, sp.highSSpareBits]) {
      expect((await verifyMandatePresentation(rebound(issued, jwt), verifyOpts)).problems).toEqual([
        {
          code: "SD_JWT_MALFORMED",
          message: "the issuer JWT is not canonical base64url (padding, or spare bits set in a last character): one mandate has one spelling",
        },
      ]);
      expect(await decodeMandatePresentation(rebound(issued, jwt))).toMatchObject({ problem: { code: "SD_JWT_MALFORMED" } });
    }
    // The high-S twin is a valid ECDSA signature: it verifies, and is the same mandate (same grant, same issuer JWT hash).
    const twin = await acceptOpenPaymentMandate(rebound(issued, sp.highS), verifyOpts, mandateAgent);
    if (!twin.ok) throw new Error(JSON.stringify(twin.refusals));
    expect(twin.delegation.delegation_id).toBe(accepted.delegation.delegation_id);
    expect(twin.verification.decoded?.issuerJwtHash).toBe(accepted.verification.decoded?.issuerJwtHash);

    // Another valid signature by the issuer over the same signed content is the same mandate.
    const again = await acceptOpenPaymentMandate(rebound(issued, sp.resigned), verifyOpts, mandateAgent);
    if (!again.ok) throw new Error(JSON.stringify(again.refusals));
    expect(again.delegation.delegation_id).toBe(accepted.delegation.delegation_id);
    expect(again.verification.decoded?.mandateHash).toBe(accepted.verification.decoded?.mandateHash);
    expect(again.verification.decoded?.issuerJwtHash).not.toBe(accepted.verification.decoded?.issuerJwtHash);
    // The identity is the hash of the signing input, whatever the signature.
    const input = sp.asIssued.slice(0, sp.asIssued.lastIndexOf("."));
    expect(accepted.verification.decoded?.mandateHash).toBe(`sha256:${createHash("sha256").update(input).digest("hex")}`);
    expect(((await decodeMandatePresentation(rebound(issued, sp.highS))) as { decoded: { mandateHash: string } }).decoded.mandateHash).toBe(
      accepted.verification.decoded?.mandateHash,
    );
  });

  it("a disclosure or key-binding JWT with spare bits set is refused as malformed", async () => {
    const text = await presentMandate(options());
    const p = split(text);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const respell = (b64: string): string | undefined => {
      const bits = (b64.length * 6) % 8;
      return bits === 0 ? undefined : b64.slice(0, -1) + (alphabet[alphabet.indexOf(b64.at(-1) ?? "A") | ((1 << bits) - 1)] ?? "");
    };
    const d = p.disclosures.findIndex((x) => respell(x) !== undefined);
    expect(d).toBeGreaterThanOrEqual(0);
    const disclosures = p.disclosures.map((x, i) => (i === d ? (respell(x) ?? x) : x));
    expect((await verifyMandatePresentation(join({ ...p, disclosures }), verifyOpts)).problems[0]).toMatchObject({
      code: "SD_JWT_MALFORMED",
      message: expect.stringMatching(/^disclosure \d+ is not canonical base64url/),
    });
    const [kh, kp, ks] = p.kb.split(".") as [string, string, string];
    expect((await verifyMandatePresentation(join({ ...p, kb: `${kh}.${kp}.${respell(ks) ?? ks}` }), verifyOpts)).problems[0]).toMatchObject({
      code: "SD_JWT_MALFORMED",
      message: expect.stringMatching(/^the key-binding JWT is not canonical/),
    });
  });

  it("an issuer key that is a small-order Ed25519 point never verifies the fixed signature", async () => {
    const identity = ed25519Jwk(IDENTITY_X);
    const claims = options().claims;
    const input = `${encodeSegment({ alg: "EdDSA", typ: "dc+sd-jwt", kid: "weak" })}.${encodeSegment({ ...claims, _sd_alg: "sha-256" })}`;
    const forged = rebind(`${input}.${FIXED_SIGNATURE.toString("base64url")}~`, `${input}.${FIXED_SIGNATURE.toString("base64url")}`, options());
    const v = await verifyMandatePresentation(forged, { ...verifyOpts, issuerKeys: [{ kid: "weak", publicKey: identity, orgId: "org_x" }] });
    expect(v.problems.map((x) => x.code)).toContain("ISSUER_SIGNATURE_INVALID");
  });
});

describe("numbers are read as signed", () => {
  it("refuses a signed budget a double cannot hold exactly (50.000000000000001 USD, read as 50)", async () => {
    const claims = options().claims;
    claims.constraints = [...(claims.constraints as unknown[]), { type: "payment.budget", currency: "USD", max: 50 }];
    const header = encodeSegment({ typ: "dc+sd-jwt", alg: wallet.alg, kid: wallet.kid });
    const sign = (json: string): string => {
      const payload = Buffer.from(json, "utf8").toString("base64url");
      return `${header}.${payload}.${jwsSigner(wallet)(`${header}.${payload}`)}~`;
    };
    const exact = await presentIssued(sign(JSON.stringify({ ...claims, _sd_alg: "sha-256" })), options());
    const exactAccepted = await acceptOpenPaymentMandate(exact, verifyOpts, mandateAgent);
    expect(exactAccepted.ok, JSON.stringify(exactAccepted)).toBe(true);

    const text = JSON.stringify({ ...claims, _sd_alg: "sha-256" }).replace(
      '"payment.budget","currency":"USD","max":50}',
      '"payment.budget","currency":"USD","max":50.000000000000001}',
    );
    expect(text).toContain("50.000000000000001");
    const inexact = await presentIssued(sign(text), options());
    expect(Buffer.from(inexact.split(".")[1] ?? "", "base64url").toString("utf8")).toContain("50.000000000000001");
    const a = await acceptOpenPaymentMandate(inexact, verifyOpts, mandateAgent);
    expect(a.ok).toBe(false);
    expect(JSON.stringify(a)).toMatch(/the issuer JWT payload: constraints\.3\.max 50\.000000000000001 cannot be read exactly/);
  });
});
