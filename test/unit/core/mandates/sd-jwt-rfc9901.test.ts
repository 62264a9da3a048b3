/**
 * RFC 9901 disclosure resolution, with mandates issued and presented by `@sd-jwt/sd-jwt-vc`
 * (an implementation Writ did not write): recursive disclosures in the layout AP2's schema
 * suggests (each constraint a disclosed array element; the payees of `payment.allowed_payees`
 * disclosed elements inside it), decoy digests, a withheld nested disclosure, and the
 * exactly-once rules on hand-built payloads.
 */
import { digest } from "@sd-jwt/crypto-nodejs";
import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../../../src/core/canonical/index.js";
import { generateSigner } from "../../../../src/core/jose/index.js";
import {
  acceptOpenPaymentMandate,
  decodeMandatePresentation,
  verifyMandatePresentation,
  type MandateAgent,
  type MandateVerifyOptions,
  type TrustedIssuerKey,
} from "../../../../src/core/mandates/index.js";
import { resolveDisclosures } from "../../../../src/core/mandates/sd-jwt-disclosures.js";
import { encodeSegment, openPaymentMandateClaims, presentMandate, validateOpenPaymentMandate, type PresentOptions } from "../../../helpers/ap2-mandates.js";

const NOW = Date.parse("2026-04-20T10:00:00Z");
const sec = (ms: number): number => Math.floor(ms / 1000);
const wallet = generateSigner("ES256");
const agent = generateSigner("EdDSA");
const AUD = "https://writ.example";
const NONCE = "n-rfc9901";
const trusted: TrustedIssuerKey = { kid: wallet.kid, publicKey: wallet.publicJwk, orgId: "org_wallet" };
const verifyOpts: MandateVerifyOptions = { issuerKeys: [trusted], audience: AUD, nonce: NONCE, now: NOW };
const mandateAgent: MandateAgent = { agentId: "agent-buyer", publicKey: agent.publicJwk, principal: { type: "human", id: "prn_user" } };

/** A mandate with a budget, two payees and an execution window. */
function claims(): Record<string, unknown> {
  const c = openPaymentMandateClaims(agent, { iatSec: sec(NOW) - 60, expSec: sec(NOW) + 3600 });
  c.constraints = [
    { type: "payment.amount_range", currency: "USD", max: 5000 },
    {
      type: "payment.allowed_payees",
      allowed: [
        { id: "merchant_shoes", name: "Shoe Shop" },
        { id: "merchant_socks", name: "Sock Shop" },
      ],
    },
    { type: "payment.reference", conditional_transaction_id: "sha256-checkout-digest-1" },
    { type: "payment.execution_date", not_before: "2026-04-20T09:59:30Z" },
  ];
  return c;
}

/**
 * AP2's layout, recursively: every constraint a disclosed array element; inside the payees
 * constraint, each payee a disclosed element and `type` a disclosed claim; `max` of the amount
 * range a disclosed claim; decoys in `cnf`'s `_sd` (decoys in the payload or a constraint are
 * refused: they cannot be told from a withheld constraint).
 */
const NESTED_FRAME = {
  _sd: ["iat"],
  cnf: { _sd_decoy: 2 },
  constraints: {
    _sd: [0, 1, 2, 3],
    0: { _sd: ["max"] },
    1: { _sd: ["type"], allowed: { _sd: [0, 1] } },
  },
};
/** Every disclosure of NESTED_FRAME, as a presentation frame of the library. */
const ALL = { iat: true, constraints: { 0: { max: true }, 1: { type: true, allowed: { 0: true, 1: true } }, 2: true, 3: true } };

function options(over: Partial<PresentOptions> = {}): PresentOptions {
  return {
    issuer: wallet,
    holder: agent,
    claims: claims(),
    audience: AUD,
    nonce: NONCE,
    kbIatSec: sec(NOW) - 5,
    frame: NESTED_FRAME,
    presentationFrame: ALL,
    ...over,
  };
}

const disclosuresOf = (text: string): unknown[] =>
  text
    .split("~")
    .slice(1, -1)
    .map((d) => JSON.parse(Buffer.from(d, "base64url").toString("utf8")) as unknown);

/** The library's own reading of the claims of a presentation. */
async function libraryClaims(text: string): Promise<unknown> {
  return new SDJwtVcInstance({ hasher: digest, hashAlg: "sha-256" }).getClaims(text);
}

describe("RFC 9901 disclosures in mandates issued by @sd-jwt/sd-jwt-vc", () => {
  it("accepts the nested AP2 layout with decoys outside the constraints and reads the same constraint values as the library", async () => {
    expect(validateOpenPaymentMandate(claims())).toBe(true);
    const text = await presentMandate(options());
    // The presentation really is nested: payee disclosures inside a disclosed constraint.
    expect(disclosuresOf(text)).toContainEqual([expect.any(String), { id: "merchant_socks", name: "Sock Shop" }]);
    expect(disclosuresOf(text)).toContainEqual([expect.any(String), "type", "payment.allowed_payees"]);
    const v = await verifyMandatePresentation(text, verifyOpts);
    expect(v.problems).toEqual([]);
    expect(v.decoded?.claims).toEqual(claims());
    expect(v.decoded?.claims).toEqual(await libraryClaims(text));
    // The decoys outside the constraints are listed, not refused: 2 in cnf.
    expect(v.decoded?.undisclosed.map((u) => [u.path, u.kind])).toEqual([
      ["cnf", "claim"],
      ["cnf", "claim"],
    ]);

    const a = await acceptOpenPaymentMandate(text, verifyOpts, mandateAgent);
    if (!a.ok) throw new Error(JSON.stringify(a.refusals));
    expect(a.delegation.scope).toEqual({
      currency: "USD",
      maximum_amount: 50,
      cumulative_maximum: 50,
      merchants: ["merchant_shoes", "merchant_socks"],
      action_types: ["purchase"],
    });
    expect(a.delegation.granted_at).toBe("2026-04-20T09:59:30.000Z");
  });

  it("decodes (what inspect shows) with the same resolver as the verifier", async () => {
    const text = await presentMandate(options());
    const d = await decodeMandatePresentation(text);
    if ("problem" in d) throw new Error(d.problem.message);
    expect(d.decoded.claims).toEqual((await verifyMandatePresentation(text, verifyOpts)).decoded?.claims);
  });

  it("a withheld nested disclosure (a payee inside a disclosed constraint) is refused as withheld, by its path", async () => {
    const text = await presentMandate(options({ presentationFrame: { ...ALL, constraints: { ...ALL.constraints, 1: { type: true, allowed: { 0: true } } } } }));
    const v = await verifyMandatePresentation(text, verifyOpts);
    expect(v.problems).toEqual([
      { code: "DISCLOSURE_MISSING", message: expect.stringMatching(/^constraints\[1\]\.allowed\[1\] is withheld \(digest [\w-]+ has no disclosure\)/) },
    ]);
    expect(v.decoded?.undisclosed).toContainEqual({ path: "constraints[1].allowed[1]", kind: "element", digest: expect.any(String) });
    // What is disclosed is still shown, without the withheld payee.
    expect(v.decoded?.claims.constraints).toContainEqual({ type: "payment.allowed_payees", allowed: [{ id: "merchant_shoes", name: "Shoe Shop" }] });
    const a = await acceptOpenPaymentMandate(text, verifyOpts, mandateAgent);
    expect(a).toMatchObject({ ok: false, refusals: [{ code: "DISCLOSURE_MISSING" }] });
  });

  it("a withheld constraint whose nested disclosures are presented: the constraint is withheld, its payees name their parent", async () => {
    const text = await presentMandate(options());
    const parts = text.split("~");
    const kept = parts.filter((p, i) => i === 0 || i === parts.length - 1 || !Buffer.from(p, "base64url").toString("utf8").includes('"allowed"'));
    expect(kept.length).toBe(parts.length - 1);
    const v = await verifyMandatePresentation(kept.join("~"), { ...verifyOpts, audience: undefined });
    const found = v.problems.filter((p) => p.code.startsWith("DISCLOSURE_"));
    expect(found).toContainEqual({ code: "DISCLOSURE_MISSING", message: expect.stringMatching(/^constraints\[1\] is withheld/) });
    expect(found.filter((p) => p.code === "DISCLOSURE_UNREFERENCED").length).toBe(3);
  });

  it("a constraint's claim the agent leaves out (execution_date.not_after) is refused as withheld, not taken for a decoy", async () => {
    const c = claims();
    (c.constraints as Record<string, unknown>[])[3] = { type: "payment.execution_date", not_before: "2026-04-20T09:59:30Z", not_after: "2026-04-20T10:30:00Z" };
    const frame = { ...NESTED_FRAME, constraints: { ...NESTED_FRAME.constraints, 3: { _sd: ["not_after"] } } };
    const all = { ...ALL, constraints: { ...ALL.constraints, 3: { not_after: true } } };
    // Presented whole, it bounds the grant.
    const whole = await acceptOpenPaymentMandate(await presentMandate(options({ claims: c, frame, presentationFrame: all })), verifyOpts, mandateAgent);
    if (!whole.ok) throw new Error(JSON.stringify(whole.refusals));
    expect(whole.delegation.expires_at).toBe("2026-04-20T10:30:00.000Z");
    // Left out by the holder, it would widen the grant by half an hour: refused, by its path.
    const text = await presentMandate(options({ claims: c, frame, presentationFrame: { ...all, constraints: { ...all.constraints, 3: true } } }));
    const v = await verifyMandatePresentation(text, verifyOpts);
    expect(v.problems).toEqual([
      {
        code: "DISCLOSURE_MISSING",
        message: expect.stringMatching(/^constraints\[3\] has a claim without its disclosure \(digest [\w-]+\): it is withheld, refused/),
      },
    ]);
    expect(await acceptOpenPaymentMandate(text, verifyOpts, mandateAgent)).toMatchObject({ ok: false, refusals: [{ code: "DISCLOSURE_MISSING" }] });
  });

  it("decoys in the payload or inside a constraint are refused as withheld claims; decoys in cnf are accepted", async () => {
    for (const frame of [
      { ...NESTED_FRAME, _sd_decoy: 2 },
      { ...NESTED_FRAME, constraints: { ...NESTED_FRAME.constraints, 0: { _sd: ["max"], _sd_decoy: 1 } } },
    ]) {
      const v = await verifyMandatePresentation(await presentMandate(options({ frame })), verifyOpts);
      expect(v.problems.length).toBeGreaterThan(0);
      expect(
        v.problems.every((p) => p.code === "DISCLOSURE_MISSING" && /^(the payload|constraints\[0\]) has a claim without its disclosure/.test(p.message)),
      ).toBe(true);
    }
    const cnfOnly = await verifyMandatePresentation(await presentMandate(options({ frame: { ...NESTED_FRAME, cnf: { _sd_decoy: 4 } } })), verifyOpts);
    expect(cnfOnly.problems).toEqual([]);
  });

  it("array decoys are refused like withheld elements (Writ cannot tell them apart)", async () => {
    const text = await presentMandate(
      options({ frame: { constraints: { _sd: [0, 1, 2, 3], _sd_decoy: 1 } }, presentationFrame: { constraints: { 0: true, 1: true, 2: true, 3: true } } }),
    );
    const v = await verifyMandatePresentation(text, verifyOpts);
    expect(v.problems).toEqual([{ code: "DISCLOSURE_MISSING", message: expect.stringMatching(/^constraints\[4\] is withheld/) }]);
  });
});

describe("resolveDisclosures (hand-built payloads)", () => {
  const disclose = (...arr: unknown[]): { text: string; dg: string } => {
    const text = encodeSegment(arr);
    return { text, dg: sha256(text).toString("base64url") };
  };
  const payee = disclose("s1", { id: "m1", name: "One" });
  const constraint = disclose("s2", { type: "payment.allowed_payees", allowed: [{ "...": payee.dg }] });

  it("resolves a disclosed element holding a disclosed element", () => {
    const r = resolveDisclosures({ constraints: [{ "...": constraint.dg }], _sd_alg: "sha-256" }, [payee.text, constraint.text]);
    expect(r).toEqual({ claims: { constraints: [{ type: "payment.allowed_payees", allowed: [{ id: "m1", name: "One" }] }] }, undisclosed: [], problems: [] });
  });

  it("refuses a disclosure referenced twice, one presented twice, and one referenced nowhere", () => {
    const twice = resolveDisclosures({ a: [{ "...": payee.dg }], b: [{ "...": payee.dg }] }, [payee.text]);
    expect(twice.problems).toEqual([{ code: "DISCLOSURE_INVALID", message: expect.stringContaining("occurs more than once") }]);
    const decoyTwice = resolveDisclosures({ _sd: ["x", "x"] }, []);
    expect(decoyTwice.problems.map((p) => p.code)).toEqual(["DISCLOSURE_INVALID"]);
    const presentedTwice = resolveDisclosures({ a: [{ "...": payee.dg }] }, [payee.text, payee.text]);
    expect(presentedTwice.problems).toEqual([{ code: "DISCLOSURE_INVALID", message: expect.stringContaining("presented twice") }]);
    const stray = resolveDisclosures({ a: 1 }, [payee.text]);
    expect(stray.problems).toEqual([
      { code: "DISCLOSURE_UNREFERENCED", message: expect.stringContaining("disclosure 1 (an array element) matches no digest") },
    ]);
  });

  it("checks _sd_alg, reserved and existing names and the kind of each disclosure", () => {
    expect(resolveDisclosures({ _sd_alg: "sha-512", a: 1 }, []).problems).toEqual([
      { code: "DISCLOSURE_INVALID", message: '_sd_alg "sha-512" is not supported (sha-256 only)' },
    ]);
    expect(resolveDisclosures({ a: { _sd_alg: "sha-256" } }, []).problems.map((p) => p.message)).toEqual([
      "a: _sd_alg may appear only at the top level of the payload",
    ]);
    const named = disclose("s3", "a", 2);
    expect(resolveDisclosures({ a: 1, _sd: [named.dg] }, [named.text]).problems[0]?.message).toContain('names the existing claim "a"');
    const reserved = disclose("s4", "_sd", []);
    expect(resolveDisclosures({ _sd: [reserved.dg] }, [reserved.text]).problems[0]?.message).toContain('names the reserved claim "_sd"');
    expect(resolveDisclosures({ a: [{ "...": named.dg }] }, [named.text]).problems[0]?.message).toContain("names a claim");
    expect(resolveDisclosures({ _sd: [payee.dg] }, [payee.text]).problems[0]?.message).toContain("is an array element's");
    expect(resolveDisclosures({}, ["not base64url!"]).problems[0]?.code).toBe("DISCLOSURE_INVALID");
  });

  it("a claim named __proto__ stays an own member, never the prototype of the claims", () => {
    const proto = disclose("s5", "__proto__", { payee: { id: "m9", name: "Nine" } });
    const r = resolveDisclosures({ _sd: [proto.dg] }, [proto.text]);
    expect(Object.getPrototypeOf(r.claims)).toBe(Object.prototype);
    expect(Object.keys(r.claims)).toEqual(["__proto__"]);
    expect((r.claims as { payee?: unknown }).payee).toBeUndefined();
  });

  it("keeps an object with '...' beside other members as an ordinary object (RFC 9901: only a lone '...' is a digest)", () => {
    expect(resolveDisclosures({ a: [{ "...": "x", b: 1 }] }, [])).toEqual({ claims: { a: [{ "...": "x", b: 1 }] }, undisclosed: [], problems: [] });
  });
});
