/**
 * sign -> ack -> amend -> revoke: each step's manifest validates, its signatures verify, and
 * prepareAgreement sees what the step promised (mandate "valid", the merchant's ack "current"
 * then "outdated" after the amendment, the revocation "valid").
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { agreementGroup } from "../../../../src/cli/agreement/index.js";
import { prepareAgreement, verifyEventChain, type IntentAgreement } from "../../../../src/core/agreement/index.js";
import { agreementFromSpec } from "../../../../src/core/crd/index.js";
import { validate } from "../../../../src/core/schemas/index.js";
import { runVerb } from "../capture.js";
import { keyFiles, tempDir, writeDoc } from "../fixtures.js";

const AT = "2026-03-01T09:00:00Z";
let dir: string;
let principal: ReturnType<typeof keyFiles>;
let merchant: ReturnType<typeof keyFiles>;
let plainPath: string;

const plain = {
  agreement_id: "agr_books_1",
  parent_limits: { currency: "USD", maximum_amount: 200, cumulative_maximum: 1000 },
  mandates: [
    {
      intent_id: "int_books",
      principal: { type: "human", id: "prn_alice" },
      agent: { agent_id: "agent_books" },
      currency: "USD",
      purpose: "Buy books",
      maximum_amount: 100,
      cumulative_maximum: 500,
      merchants: ["bookshop"],
      required_acknowledgements: ["merchant"],
      expires_at: "2030-01-01T00:00:00Z",
    },
  ],
};

function manifestOf(yamlText: string): { manifest: Record<string, unknown>; record: IntentAgreement; delegation: string | undefined } {
  const manifest = parse(yamlText) as Record<string, unknown>;
  const { record, delegationName } = agreementFromSpec(manifest.spec);
  const v = validate<IntentAgreement>("intent-agreement", record);
  if (!v.ok) throw new Error(v.errors.join("\n"));
  return { manifest, record: v.value, delegation: delegationName };
}

async function step(argv: string[], file: string): Promise<{ out: string; err: string; path: string }> {
  const r = await runVerb(agreementGroup, argv);
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.err}`);
  const path = join(dir, file);
  writeFileSync(path, r.out);
  return { out: r.out, err: r.err, path };
}

beforeAll(() => {
  dir = tempDir();
  principal = keyFiles(dir, "principal");
  merchant = keyFiles(dir, "merchant", "ES256");
  plainPath = writeDoc(dir, "plain.yaml", plain);
});

describe("writ agreement sign -> ack -> amend -> revoke", () => {
  it("each manifest validates and verifies as promised", async () => {
    const signed = await step(
      ["sign", "--in", plainPath, "--key-file", principal.privateFile, "--delegation", "books", "--namespace", "shop", "--at", AT],
      "signed.yaml",
    );
    const s = manifestOf(signed.out);
    expect(s.manifest).toMatchObject({ apiVersion: "writ.dev/v1alpha1", kind: "IntentAgreement", metadata: { name: "agr-books-1", namespace: "shop" } });
    expect(s.delegation).toBe("books");
    expect(s.record.status).toBe("active");
    expect(s.record.events.map((e) => e.type)).toEqual(["proposed", "accepted", "activated"]);
    expect(s.record.mandates[0]?.principal.public_key).toEqual(principal.signer.publicJwk);
    let prepared = await prepareAgreement(s.record);
    expect(prepared.mandates[0]?.signature).toBe("valid");
    expect(prepared.mandates[0]?.acks).toEqual([{ role: "merchant", state: "missing" }]);
    expect(signed.out).toContain('created_at: "2026-03-01T09:00:00Z"');

    const acked = await step(
      [
        "ack",
        "--in",
        signed.path,
        "--role",
        "merchant",
        "--id",
        "bookshop",
        "--key-file",
        merchant.privateFile,
        "--domain",
        "bookshop.example",
        "--at",
        "2026-03-01T09:05:00Z",
      ],
      "acked.yaml",
    );
    const a = manifestOf(acked.out);
    expect(a.record.acknowledgements).toHaveLength(1);
    expect(a.record.acknowledgements?.[0]).toMatchObject({
      role: "merchant",
      id: "bookshop",
      domain: "bookshop.example",
      public_key: merchant.signer.publicJwk,
    });
    expect(a.record.events.at(-1)).toMatchObject({ type: "acknowledged", actor: { role: "merchant", id: "bookshop" } });
    prepared = await prepareAgreement(a.record);
    expect(prepared.mandates[0]?.acks).toEqual([{ role: "merchant", state: "current" }]);
    expect(prepared.eventChainProblem).toBeUndefined();

    const amended = await step(
      [
        "amend",
        "--in",
        acked.path,
        "--intent",
        "int_books",
        "--set",
        "maximum_amount=150",
        "--set",
        "merchants=bookshop,antiquariat",
        "--key-file",
        principal.privateFile,
        "--at",
        "2026-03-02T09:00:00Z",
      ],
      "amended.yaml",
    );
    const m = manifestOf(amended.out);
    expect(m.record.mandates[0]).toMatchObject({ maximum_amount: 150, merchants: ["bookshop", "antiquariat"] });
    expect(m.record.mandates[0]?.rendering).toContain("up to 150 USD per payment");
    expect(m.record.mandate_history?.[0]?.maximum_amount).toBe(100);
    expect(m.record.events.at(-1)?.type).toBe("amended");
    prepared = await prepareAgreement(m.record);
    expect(prepared.mandates[0]?.signature).toBe("valid");
    expect(prepared.mandates[0]?.acks).toEqual([{ role: "merchant", state: "outdated" }]);
    expect(amended.err).toContain("now count as outdated");

    const reacked = await step(["ack", "--in", amended.path, "--role", "merchant", "--id", "bookshop", "--key-file", merchant.privateFile], "reacked.yaml");
    expect((await prepareAgreement(manifestOf(reacked.out).record)).mandates[0]?.acks).toEqual([{ role: "merchant", state: "current" }]);

    const revoked = await step(
      ["revoke", "--in", amended.path, "--reason", "lost the card", "--key-file", principal.privateFile, "--at", "2026-03-03T09:00:00Z"],
      "revoked.yaml",
    );
    const r = manifestOf(revoked.out);
    expect(r.record.status).toBe("revoked");
    expect((r.manifest.spec as Record<string, unknown>).state).toBe("revoked");
    expect(r.record.revocation).toMatchObject({ svc_revocation: 1, agreement_id: "agr_books_1", reason: "lost the card", at: "2026-03-03T09:00:00Z" });
    expect(r.record.events.at(-1)).toMatchObject({ type: "revoked", actor: { role: "principal", id: "prn_alice" } });
    expect(verifyEventChain(r.record.events, r.record.agreement_id)).toBeUndefined();
    prepared = await prepareAgreement(r.record);
    expect(prepared.revocation).toBe("valid");
    expect(prepared.mandates[0]?.signature).toBe("valid");
  });

  it("emits JSON with --output json", async () => {
    const r = await runVerb(agreementGroup, [
      "sign",
      "--in",
      plainPath,
      "--key-file",
      principal.privateFile,
      "--delegation",
      "books",
      "--output",
      "json",
      "--at",
      AT,
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ kind: "IntentAgreement", spec: { delegationRef: { name: "books" }, state: "active" } });
  });
});

describe("refusals", () => {
  async function signedPath(): Promise<string> {
    const r = await runVerb(agreementGroup, ["sign", "--in", plainPath, "--key-file", principal.privateFile, "--delegation", "books", "--at", AT]);
    const path = join(dir, `s-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(path, r.out);
    return path;
  }

  it("sign refuses a mandate that already carries a signature, another principal's key, and unknown members", async () => {
    const withSig = writeDoc(dir, "sig.yaml", { ...plain, mandates: [{ ...plain.mandates[0], algorithm: "EdDSA" }] });
    let r = await runVerb(agreementGroup, ["sign", "--in", withSig, "--key-file", principal.privateFile, "--delegation", "books"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("mandate 0 already carries algorithm");
    const other = keyFiles(dir, "other");
    const withKey = writeDoc(dir, "key.json", {
      ...plain,
      mandates: [{ ...plain.mandates[0], principal: { type: "human", id: "prn_alice", public_key: other.signer.publicJwk } }],
    });
    r = await runVerb(agreementGroup, ["sign", "--in", withKey, "--key-file", principal.privateFile, "--delegation", "books"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`names principal key ${other.signer.kid} but --key-file holds ${principal.signer.kid}`);
    const extra = writeDoc(dir, "extra.yaml", { ...plain, status: "active" });
    r = await runVerb(agreementGroup, ["sign", "--in", extra, "--key-file", principal.privateFile, "--delegation", "books"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("unexpected member(s) status");
  });

  it("sign fails (exit 1) with the schema's words when the result is invalid, and needs --delegation", async () => {
    const bad = writeDoc(dir, "bad.yaml", { ...plain, mandates: [{ ...plain.mandates[0], currency: "usd" }] });
    const r = await runVerb(agreementGroup, ["sign", "--in", bad, "--key-file", principal.privateFile, "--delegation", "books"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("does not validate against the intent agreement schema");
    expect(r.err).toContain("/mandates/0/currency");
    const noRef = await runVerb(agreementGroup, ["sign", "--in", plainPath, "--key-file", principal.privateFile]);
    expect(noRef.code).toBe(2);
    expect(noRef.err).toContain("--delegation is required");
  });

  it("sign refuses a public key file where the private key is needed", async () => {
    const r = await runVerb(agreementGroup, ["sign", "--in", plainPath, "--key-file", principal.publicFile, "--delegation", "books"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("is a public key; pass the private key file");
  });

  it("ack refuses a mandate whose signature no longer verifies", async () => {
    const path = await signedPath();
    const doc = parse((await import("node:fs")).readFileSync(path, "utf8")) as { spec: { mandates: Array<Record<string, unknown>> } };
    (doc.spec.mandates[0] as Record<string, unknown>).maximum_amount = 150;
    const tampered = writeDoc(dir, "tampered.yaml", doc);
    const r = await runVerb(agreementGroup, ["ack", "--in", tampered, "--role", "merchant", "--id", "bookshop", "--key-file", merchant.privateFile]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("intent int_books's mandate signature is invalid; refusing to acknowledge it");
    expect(r.out).toBe("");
  });

  it("amend refuses another key than the principal's, a change above parent_limits, an unknown intent and an unknown field", async () => {
    const path = await signedPath();
    let r = await runVerb(agreementGroup, ["amend", "--in", path, "--intent", "int_books", "--set", "maximum_amount=150", "--key-file", merchant.privateFile]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("SIGNER_NOT_PRINCIPAL");
    r = await runVerb(agreementGroup, ["amend", "--in", path, "--intent", "int_books", "--set", "maximum_amount=250", "--key-file", principal.privateFile]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("maximum_amount 250 is above parent_limits.maximum_amount 200");
    r = await runVerb(agreementGroup, ["amend", "--in", path, "--intent", "int_nope", "--set", "maximum_amount=50", "--key-file", principal.privateFile]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('no live intent "int_nope"; the agreement holds int_books');
    r = await runVerb(agreementGroup, ["amend", "--in", path, "--intent", "int_books", "--set", "signature=x", "--key-file", principal.privateFile]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--set cannot change "signature"');
    r = await runVerb(agreementGroup, ["amend", "--in", path, "--intent", "int_books", "--set", "maximum_amount=12,5", "--key-file", principal.privateFile]);
    expect(r.code).toBe(2);
  });

  it("amend keeps a hand-written rendering and warns", async () => {
    const custom = writeDoc(dir, "custom.yaml", { ...plain, mandates: [{ ...plain.mandates[0], rendering: "Alice's book budget." }] });
    const s = await runVerb(agreementGroup, ["sign", "--in", custom, "--key-file", principal.privateFile, "--delegation", "books"]);
    const path = join(dir, "custom-signed.yaml");
    writeFileSync(path, s.out);
    const r = await runVerb(agreementGroup, [
      "amend",
      "--in",
      path,
      "--intent",
      "int_books",
      "--set",
      "maximum_amount=50",
      "--key-file",
      principal.privateFile,
    ]);
    expect(r.code).toBe(0);
    expect(manifestOf(r.out).record.mandates[0]?.rendering).toBe("Alice's book budget.");
    expect(r.err).toContain("keeps its hand-written rendering");
  });

  it("revoke refuses another key than the principal's and a second revocation", async () => {
    const path = await signedPath();
    let r = await runVerb(agreementGroup, ["revoke", "--in", path, "--reason", "x", "--key-file", merchant.privateFile]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("--key-file must be the principal key");
    r = await runVerb(agreementGroup, ["revoke", "--in", path, "--reason", "x", "--key-file", principal.privateFile]);
    expect(r.code).toBe(0);
    const revoked = join(dir, "revoked-twice.yaml");
    writeFileSync(revoked, r.out);
    r = await runVerb(agreementGroup, ["revoke", "--in", revoked, "--reason", "again", "--key-file", principal.privateFile]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("already carries a revocation");
    r = await runVerb(agreementGroup, ["ack", "--in", revoked, "--role", "merchant", "--id", "m", "--key-file", merchant.privateFile]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("the agreement is revoked");
  });

  it("reads a manifest that kubectl printed: server metadata and .status are dropped", async () => {
    const path = await signedPath();
    const doc = parse((await import("node:fs")).readFileSync(path, "utf8")) as Record<string, Record<string, unknown>>;
    doc.metadata = {
      ...doc.metadata,
      uid: "u-1",
      resourceVersion: "7",
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}", team: "books" },
    };
    doc.status = { phase: "Active" };
    const fromKubectl = writeDoc(dir, "kubectl.yaml", doc);
    const r = await runVerb(agreementGroup, ["revoke", "--in", fromKubectl, "--reason", "x", "--key-file", principal.privateFile]);
    expect(r.code).toBe(0);
    const out = parse(r.out) as Record<string, unknown>;
    expect(out.metadata).toEqual({ name: "agr-books-1", annotations: { team: "books" } });
    expect(out).not.toHaveProperty("status");
  });

  it("refuses a file of another kind", async () => {
    const wrong = writeDoc(dir, "wrong.yaml", { apiVersion: "writ.dev/v1alpha1", kind: "Delegation", metadata: { name: "d" }, spec: {} });
    const r = await runVerb(agreementGroup, ["revoke", "--in", wrong, "--reason", "x", "--key-file", principal.privateFile]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('has kind "Delegation"; expected kind IntentAgreement');
  });
});
