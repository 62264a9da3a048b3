/** `writ mandate inspect` (offline verification) and `writ mandate submit` (against a stand-in). */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mandateInspect } from "../../../../src/cli/mandate/inspect.js";
import { mandateSubmit } from "../../../../src/cli/mandate/submit.js";
import { generateSigner } from "../../../../src/core/jose/index.js";
import { openPaymentMandateClaims, presentMandate } from "../../../helpers/ap2-mandates.js";
import { FIXED_NOW, runVerb } from "../capture.js";
import { startStandIn, type StandIn } from "../verbs/stand-in.js";

const dir = mkdtempSync(join(tmpdir(), "writ-mandate-"));
const wallet = generateSigner("ES256");
const agent = generateSigner("EdDSA");
const other = generateSigner("EdDSA");
const nowSec = Math.floor(FIXED_NOW.getTime() / 1000);
let s: StandIn;
let mandateFile: string;

function file(name: string, content: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
  return p;
}

beforeAll(async () => {
  s = await startStandIn();
  const text = await presentMandate({
    issuer: wallet,
    holder: agent,
    audience: "writ",
    nonce: "n1",
    kbIatSec: nowSec,
    claims: openPaymentMandateClaims(agent, { iatSec: nowSec - 60, expSec: nowSec + 3600 }),
  });
  mandateFile = file("mandate.sd-jwt", `${text}\n`);
  file("wallet.public.jwk.json", { ...wallet.publicJwk, kid: "wallet-1" });
  file("wallet-plain.jwk.json", wallet.publicJwk);
  file("agent.public.jwk.json", agent.publicJwk);
  file("other.public.jwk.json", other.publicJwk);
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("writ mandate inspect", () => {
  it("verifies offline with the issuer's key file and prints claims and the delegation it would become", async () => {
    // The issuer header names the wallet's thumbprint id; a key file without kid is looked up by it.
    const r = await runVerb(mandateInspect, [
      "--file",
      mandateFile,
      "--issuer-key-file",
      join(dir, "wallet-plain.jwk.json"),
      "--agent-key-file",
      join(dir, "agent.public.jwk.json"),
      "--audience",
      "writ",
      "--nonce",
      "n1",
    ]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("signature verified");
    expect(r.out).toContain('"type": "payment.amount_range"');
    expect(r.out).toMatch(
      /verified: delegation ap2-[0-9a-f]{32} from .* scope {"currency":"USD","maximum_amount":50,"cumulative_maximum":50,"action_types":\["purchase"\],"merchants":\["merchant_shoes"\]}/,
    );
  });

  it("lists every problem: unknown issuer, another agent key, wrong audience; exit 1", async () => {
    const r = await runVerb(mandateInspect, [
      "--file",
      mandateFile,
      "--issuer-key-file",
      join(dir, "wallet.public.jwk.json"),
      "--audience",
      "elsewhere",
      "--output",
      "json",
    ]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as { verified: boolean; problems: { code: string }[]; claims: Record<string, unknown> };
    expect(report.verified).toBe(false);
    // The key file names kid wallet-1, the header the thumbprint: not a trusted key.
    expect(report.problems.map((p) => p.code)).toEqual(["ISSUER_UNKNOWN", "KB_JWT_AUDIENCE_MISMATCH"]);
    expect(report.claims.vct).toBe("mandate.payment.open.1");
    const mismatch = await runVerb(mandateInspect, [
      "--file",
      mandateFile,
      "--issuer-key-file",
      join(dir, "wallet-plain.jwk.json"),
      "--agent-key-file",
      join(dir, "other.public.jwk.json"),
    ]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.out).toContain("CNF_KEY_MISMATCH: cnf.jwk is key");
  });

  it("resolves nested disclosures and decoys as the verifier does: the payees it shows are the ones it accepts, a withheld one is named", async () => {
    const claims = openPaymentMandateClaims(agent, { iatSec: nowSec - 60, expSec: nowSec + 3600 });
    const payees = [
      { id: "merchant_shoes", name: "Shoe Shop" },
      { id: "merchant_socks", name: "Sock Shop" },
    ];
    claims.constraints = (claims.constraints as Record<string, unknown>[]).map((c) => (c.type === "payment.allowed_payees" ? { ...c, allowed: payees } : c));
    // @sd-jwt/sd-jwt-vc: each constraint a disclosed element, each payee a disclosed element inside it, two decoys in cnf.
    const frame = { cnf: { _sd_decoy: 2 }, constraints: { _sd: [0, 1, 2], 1: { allowed: { _sd: [0, 1] } } } };
    const base = { issuer: wallet, holder: agent, audience: "writ", nonce: "n1", kbIatSec: nowSec, claims, frame };
    const args = (f: string) => ["--file", f, "--issuer-key-file", join(dir, "wallet-plain.jwk.json"), "--agent-key-file", join(dir, "agent.public.jwk.json")];

    const all = await presentMandate({ ...base, presentationFrame: { constraints: { 0: true, 1: { allowed: { 0: true, 1: true } }, 2: true } } });
    const ok = await runVerb(mandateInspect, args(file("nested.sd-jwt", all)));
    expect(ok.out).toContain('"merchants":["merchant_shoes","merchant_socks"]');
    expect(ok.out).toContain("undisclosed: a claim of cnf (a decoy");
    expect(ok.code).toBe(0);

    const one = await presentMandate({ ...base, presentationFrame: { constraints: { 0: true, 1: { allowed: { 0: true } }, 2: true } } });
    const r = await runVerb(mandateInspect, [...args(file("withheld.sd-jwt", one)), "--output", "json"]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as {
      problems: { code: string; message: string }[];
      claims: { constraints: unknown[] };
      undisclosed: { path: string; kind: string }[];
    };
    expect(report.problems).toEqual([{ code: "DISCLOSURE_MISSING", message: expect.stringMatching(/^constraints\[1\]\.allowed\[1\] is withheld/) }]);
    expect(report.undisclosed).toContainEqual({ path: "constraints[1].allowed[1]", kind: "element", digest: expect.any(String) });
    expect(report.claims.constraints).toContainEqual({ type: "payment.allowed_payees", allowed: [payees[0]] });
  });

  it("reports an expired mandate at --at, and refuses bad usage with exit 2", async () => {
    const late = new Date((nowSec + 7200) * 1000).toISOString();
    const r = await runVerb(mandateInspect, ["--file", mandateFile, "--issuer-key-file", join(dir, "wallet-plain.jwk.json"), "--at", late]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("KB_JWT_STALE");
    expect((await runVerb(mandateInspect, [])).code).toBe(2);
    expect((await runVerb(mandateInspect, ["--file", file("empty.sd-jwt", "")])).code).toBe(1);
  });
});

describe("writ mandate submit", () => {
  it("POSTs {agent_id, sd_jwt, nonce} with the key and prints the delegation", async () => {
    s.answer = {
      status: 201,
      body: {
        delegation_id: "ap2-0123",
        agreement_id: "ap2-0123",
        agent_id: "agent-1",
        expires_at: "2026-03-01T11:00:00.000Z",
        issuer_kid: wallet.kid,
        created: true,
        revoked: false,
      },
    };
    const r = await runVerb(mandateSubmit, ["--server", s.url, "--agent", "agent-1", "--file", mandateFile, "--nonce", "n1"], {
      env: { WRIT_API_KEY: "bur_k" },
    });
    expect(r.code).toBe(0);
    expect(s.received.at(-1)).toMatchObject({ method: "POST", path: "/v1/mandates", body: { agent_id: "agent-1", nonce: "n1" } });
    expect((s.received.at(-1)?.body as { sd_jwt: string }).sd_jwt).not.toMatch(/\s/);
    expect(s.received.at(-1)?.headers.authorization).toBe("Bearer bur_k");
    expect(r.out).toBe(`recorded: delegation ap2-0123 for agent agent-1, until 2026-03-01T11:00:00.000Z, issuer key ${wallet.kid}\n`);
  });

  it("a refusal exits 1 with the server's reason", async () => {
    s.answer = { status: 400, body: { error: 'mandate refused: ISSUER_UNKNOWN: issuer key "x" is not a trusted issuer key' } };
    const r = await runVerb(mandateSubmit, ["--server", s.url, "--agent", "agent-1", "--file", mandateFile], { env: { WRIT_API_KEY: "bur_k" } });
    expect(r.code).toBe(1);
    expect(r.err).toContain("mandate refused: ISSUER_UNKNOWN");
  });
});
