/**
 * config/samples/: exactly the reference copies hack/samples/main.ts renders (fails when stale), and valid Writ
 * records: each spec, mapped to its record, passes the same JSON Schema the CRD was generated
 * from; the chained delegation's chain is intact and only narrows; the agreement's mandate
 * signatures and event chain verify with the PUBLIC sample keys.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PUBLIC_SAMPLE_SEED_LABELS, SAMPLE_AT, SAMPLE_NAMES, SAMPLE_WEBHOOK_URL, publicSampleSeed, sampleSigner } from "../../src/core/samples/index.js";
import { renderSamples } from "../../src/manifests/samples.js";
import { mandateHash, parentLimitsProblem, verifyEventChain, verifyMandate } from "../../src/core/agreement/index.js";
import type { IntentAgreement, Mandate } from "../../src/core/agreement/index.js";
import { sha256 } from "../../src/core/canonical/index.js";
import { agreementFromSpec, delegationFromSpec } from "../../src/core/crd/index.js";
import { prepareDelegation, type Delegation } from "../../src/core/delegation/index.js";
import { effectiveStatus } from "../../src/core/evaluate/index.js";
import { DEFAULT_POLICY, type EvalContext } from "../../src/core/evaluate/types.js";
import { validate } from "../../src/core/schemas/index.js";

const DEFAULT_CONTEXT: EvalContext = { now: 0, policy: DEFAULT_POLICY, revocations: { isDelegationRevoked: () => false, isAgreementRevoked: () => false } };

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SAMPLES_DIR = "config/samples";

interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown>;
}

const files = await renderSamples();
const manifests = files.map((f) => parse(f.content) as Manifest);
const byName = (name: string) => {
  const m = manifests.find((x) => x.metadata.name === name);
  if (!m) throw new Error(`no sample ${name}`);
  return m;
};

function delegation(name: string): Delegation {
  const result = validate<Delegation>("delegation", delegationFromSpec(byName(name).spec));
  if (!result.ok) throw new Error(result.errors.join("; "));
  return result.value;
}

describe("config/samples", () => {
  it.each(files.map((f) => [f.name, f.content] as const))("%s is up to date", (name, content) => {
    const path = join(ROOT, SAMPLES_DIR, name);
    expect(existsSync(path), `${path} is missing: run npm run gen:samples`).toBe(true);
    expect(readFileSync(path, "utf8") === content, `${SAMPLES_DIR}/${name} is stale: run npm run gen:samples`).toBe(true);
  });

  it("holds two Delegations, an IntentAgreement and a Subscription", () => {
    expect(manifests.map((m) => m.kind).sort()).toEqual(["Delegation", "Delegation", "IntentAgreement", "Subscription"]);
  });

  it("says in every file that its keys are PUBLIC samples", () => {
    for (const f of files) expect(f.content).toMatch(/PUBLIC SAMPLE seeds/);
    for (const label of Object.values(PUBLIC_SAMPLE_SEED_LABELS)) expect(label).toMatch(/PUBLIC SAMPLE/);
    expect(publicSampleSeed("principal")).toBe(sha256(PUBLIC_SAMPLE_SEED_LABELS.principal).toString("hex"));
  });

  it("declares delegations that are valid records, the chained one narrowing an intact chain", () => {
    const root = delegation(SAMPLE_NAMES.delegation);
    const chained = delegation(SAMPLE_NAMES.chainedDelegation);
    expect(root.principal).toMatchObject({ type: "business", public_key: sampleSigner("principal").publicJwk });
    const preparedRoot = prepareDelegation(root);
    expect(preparedRoot.problems).toEqual([]);
    const prepared = prepareDelegation(chained);
    expect(prepared.problems).toEqual([]);
    expect(prepared.chain).toHaveLength(1);
    expect(prepared.chainBroken).toBeUndefined();
    expect(prepared.chainWidened).toBeUndefined();
    expect(chained.delegation_chain[0]?.delegation_id).toBe(root.delegation_id);
  });

  it("declares a signed agreement bound to the root delegation, whose signatures verify", async () => {
    const { record, delegationName } = agreementFromSpec(byName(SAMPLE_NAMES.agreement).spec);
    expect(delegationName).toBe(SAMPLE_NAMES.delegation);
    const result = validate<IntentAgreement>("intent-agreement", record);
    expect(result.ok ? [] : result.errors).toEqual([]);
    const agreement = record as unknown as IntentAgreement;
    expect(agreement.status).toBe("active");
    for (const m of agreement.mandates) {
      expect(await verifyMandate(m)).toBe("valid");
      expect(m.principal.public_key).toEqual(delegation(SAMPLE_NAMES.delegation).principal.public_key);
    }
    expect(parentLimitsProblem(agreement)).toBeUndefined();
    expect(verifyEventChain(agreement.events, agreement.agreement_id)).toBeUndefined();
    expect(agreement.events[0]?.mandate_hash).toBe(mandateHash(agreement.mandates[0] as Mandate));
  });

  it("a tampered mandate no longer verifies (the check above can fail)", async () => {
    const { record } = agreementFromSpec(byName(SAMPLE_NAMES.agreement).spec);
    const m = structuredClone((record as unknown as IntentAgreement).mandates[0] as Mandate);
    m.maximum_amount = 251;
    expect(await verifyMandate(m)).toBe("invalid");
  });

  it("subscribes the delegated agent at the webhook receiver writ dev runs on this machine (or the URL given)", async () => {
    const s = byName(SAMPLE_NAMES.subscription).spec;
    expect(s).toEqual({ agentId: "agent_procurement", webhookUrl: SAMPLE_WEBHOOK_URL });
    expect(SAMPLE_WEBHOOK_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const other = (await renderSamples(SAMPLE_AT, { dated: true, webhookUrl: "http://127.0.0.1:4321/hook" })).map((f) => parse(f.content) as Manifest);
    expect(other.find((m) => m.kind === "Subscription")?.spec.webhookUrl).toBe("http://127.0.0.1:4321/hook");
  });

  it("declares delegations that hold at any hour of any day while their grants last (no time condition)", () => {
    const start = Date.parse(SAMPLE_AT);
    for (const name of [SAMPLE_NAMES.delegation, SAMPLE_NAMES.chainedDelegation]) {
      const prepared = prepareDelegation(delegation(name));
      // Every hour of the first three days, Saturday night in Berlin included.
      for (let h = 1; h < 72; h += 1) {
        const ctx: EvalContext = { ...DEFAULT_CONTEXT, now: start + h * 3600_000 };
        expect([name, h, effectiveStatus(prepared, ctx)]).toEqual([name, h, "active"]);
      }
    }
  });

  it("re-dates every time from --at and signs again", async () => {
    const later = await renderSamples("2030-01-01T09:00:00Z");
    const text = later.map((f) => f.content).join("\n");
    expect(text).toContain('granted_at: "2030-01-01T09:00:00Z"');
    expect(text).not.toContain("2026-11-");
  });
});
