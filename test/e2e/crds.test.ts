/**
 * The generated CRDs against a real kube-apiserver 1.20 (envtest): they install and become
 * Established; the samples apply; `kubectl get writ`, printer columns and `kubectl explain`
 * work; invalid manifests are refused by the API server; a signed agreement survives the
 * round trip through the API server byte for byte (its signatures still verify); generation
 * bumps on spec changes but not on status writes through the status subresource.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SAMPLE_NAMES, buildSamples } from "../../src/core/samples/index.js";
import { verifyMandate, type IntentAgreement } from "../../src/core/agreement/index.js";
import { agreementFromSpec } from "../../src/core/crd/index.js";
import { ensureEnvtest, startEnvtest, type CommandResult, type Envtest } from "../helpers/envtest.js";

const CRDS = fileURLToPath(new URL("../../crds/", import.meta.url));
const SAMPLES = fileURLToPath(new URL("../../config/samples/", import.meta.url));
const CRD_NAMES = ["delegations.writ.dev", "intentagreements.writ.dev", "subscriptions.writ.dev"];

function ok(r: CommandResult): string {
  expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
  return r.stdout;
}

interface Resource {
  metadata: { name: string; generation: number };
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** A small valid Delegation; `patch` edits its spec (null deletes a field). */
function delegation(name: string, patch: (spec: Record<string, unknown>) => void = () => {}): string {
  const spec: Record<string, unknown> = {
    delegation_id: `del_${name}`,
    principal: { type: "business", id: "org_test" },
    agent: { agent_id: "agent_test" },
    granted_at: "2026-11-20T09:00:00Z",
    expires_at: "2026-11-21T09:00:00Z",
    purpose: "e2e",
    scope: { currency: "EUR", maximum_amount: 10 },
  };
  patch(spec);
  return stringify({ apiVersion: "writ.dev/v1alpha1", kind: "Delegation", metadata: { name }, spec });
}

describe("Writ CRDs on a real API server", () => {
  let env: Envtest;
  const kubectl = (args: string[], input?: string) => env.kubectl(args, input === undefined ? {} : { input });
  /** kubectl explain's text on one line (it wraps descriptions). */
  const explain = async (path: string) => ok(await kubectl(["explain", path])).replace(/\s+/g, " ");
  const getJson = async <T>(args: string[]) => JSON.parse(ok(await kubectl([...args, "-o", "json"]))) as T;

  beforeAll(async () => {
    const binDir = await ensureEnvtest();
    env = await startEnvtest({ binDir });
  }, 30 * 60_000);

  afterAll(async () => {
    await env?.stop();
  }, 60_000);

  it("installs the CRDs, which become Established", async () => {
    ok(await kubectl(["apply", "-f", CRDS]));
    ok(await kubectl(["wait", "--for=condition=Established", "--timeout=30s", ...CRD_NAMES.map((n) => `crd/${n}`)]));
    const names = ok(await kubectl(["api-resources", "--api-group=writ.dev", "-o", "name"]))
      .trim()
      .split("\n")
      .sort();
    expect(names).toEqual(CRD_NAMES);
    // The API server publishes a new CRD's OpenAPI (what kubectl explain and kubectl's
    // client-side validation read) a moment after Established: wait for all three.
    for (const kind of ["delegation", "intentagreement", "wsub"]) {
      const deadline = Date.now() + 30_000;
      let r = await kubectl(["explain", `${kind}.spec`]);
      while (r.code !== 0 && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 250));
        r = await kubectl(["explain", `${kind}.spec`]);
      }
      ok(r);
    }
  });

  it("accepts the samples, and `kubectl get writ` lists every kind", async () => {
    ok(await kubectl(["apply", "-f", SAMPLES]));
    const listed = ok(await kubectl(["get", "writ", "-o", "name"]))
      .trim()
      .split("\n")
      .sort();
    expect(listed).toEqual(
      [
        `delegation.writ.dev/${SAMPLE_NAMES.delegation}`,
        `delegation.writ.dev/${SAMPLE_NAMES.chainedDelegation}`,
        `intentagreement.writ.dev/${SAMPLE_NAMES.agreement}`,
        `subscription.writ.dev/${SAMPLE_NAMES.subscription}`,
      ].sort(),
    );
    expect(ok(await kubectl(["get", "wia", "-o", "name"])).trim()).toBe(`intentagreement.writ.dev/${SAMPLE_NAMES.agreement}`);
    expect(ok(await kubectl(["get", "wsub", "-o", "name"])).trim()).toBe(`subscription.writ.dev/${SAMPLE_NAMES.subscription}`);
  });

  it("keeps the signed agreement byte for byte: its mandate signatures still verify", async () => {
    const got = await getJson<Resource>(["get", "wia", SAMPLE_NAMES.agreement]);
    const { record, delegationName } = agreementFromSpec(got.spec);
    expect(delegationName).toBe(SAMPLE_NAMES.delegation);
    const agreement = record as unknown as IntentAgreement;
    expect(agreement.mandates).toHaveLength(2);
    for (const m of agreement.mandates) expect(await verifyMandate(m)).toBe("valid");
  });

  it("shows the printer columns, more under -o wide, and status values once written", async () => {
    const header = ok(await kubectl(["get", "wdel"]))
      .split("\n")[0]
      ?.trim()
      .split(/\s+/);
    expect(header).toEqual(["NAME", "READY", "PHASE", "REASON", "AGENT", "EXPIRES", "AGE"]);
    ok(
      await kubectl([
        "patch",
        "wdel",
        SAMPLE_NAMES.chainedDelegation,
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({
          status: {
            phase: "Active",
            chainDepth: 1,
            effectiveStatus: "active",
            observedGeneration: 1,
            conditions: [
              { type: "Ready", status: "True", reason: "Reconciled", message: "stored", lastTransitionTime: "2026-11-20T10:00:00Z", observedGeneration: 1 },
            ],
          },
        }),
      ]),
    );
    const wide = ok(await kubectl(["get", "wdel", SAMPLE_NAMES.chainedDelegation, "-o", "wide"]))
      .trim()
      .split("\n");
    expect(wide[0]?.split(/\s+/)).toEqual(["NAME", "READY", "PHASE", "REASON", "AGENT", "EXPIRES", "AGE", "MESSAGE", "PRINCIPAL", "STATE", "DEPTH", "ID"]);
    const samples = await buildSamples();
    const spec = samples.find((s) => s.manifest.metadata.name === SAMPLE_NAMES.chainedDelegation)!.manifest.spec;
    const row = wide[1]?.split(/\s+/) ?? [];
    expect(row.slice(0, 6)).toEqual([SAMPLE_NAMES.chainedDelegation, "True", "Active", "Reconciled", "agent_travel", spec.expires_at]);
    expect(row.slice(7)).toEqual(["stored", "org_acme", "active", "1", spec.delegation_id]);
    const mandate = (samples.find((s) => s.manifest.kind === "IntentAgreement")!.manifest.spec.mandates as Array<{ expires_at: string }>)[0]!;
    const wia =
      ok(await kubectl(["get", "wia", "-o", "wide"]))
        .split("\n")[1]
        ?.trim()
        .split(/\s+/) ?? [];
    expect(wia).toEqual(expect.arrayContaining(["agent_procurement", mandate.expires_at, SAMPLE_NAMES.delegation, "org_acme"]));
  });

  it("teaches the API through kubectl explain", async () => {
    expect(await explain("delegation.spec.scope.maximum_amount")).toMatch(/maximum_amount <number> DESCRIPTION: Per-transaction ceiling, in major units\./);
    expect(await explain("delegation.spec.state")).toMatch(/Declared status of the grant .* Default active\./);
    expect(await explain("wia.spec.delegationRef")).toMatch(/The Delegation \(a resource in the same namespace\) this agreement is bound to/);
    expect(await explain("wsub.spec.webhookUrl")).toMatch(/https, or http on localhost only/);
    expect(await explain("delegation.status.effectiveStatus")).toMatch(/The status evaluators enforce/);
    expect(await explain("delegation.spec.conditions.start")).toMatch(/Only when type is time_window\./);
    expect(await explain("delegation.spec.scope.period_limits")).toMatch(/Limits per period on the spend under this delegation/);
    expect(await explain("delegation.spec.scope.time_zone")).toMatch(/IANA time zone of the principal for period_limits\. Default UTC\./);
    expect(await explain("wia.spec.mandates.recurrence")).toMatch(/Makes the intent a recurring mandate: one payment per frequency window/);
    expect(await explain("wia.spec.mandates.refunds_restore_budget")).toMatch(/Absent or false: refunds restore nothing/);
  });

  it("has kubectl refuse unknown fields by default (client-side, from the published schema)", async () => {
    const r = await kubectl(
      ["create", "--dry-run=server", "-f", "-"],
      delegation("typo", (s) => (s.scope = { currency: "EUR", maximum_amuont: 10 })),
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown field "maximum_amuont"/);
  });

  it("defaults state to active and prunes unknown fields (server side)", async () => {
    ok(
      await kubectl(
        ["apply", "--validate=false", "-f", "-"],
        delegation("defaults", (s) => (s.scope = { currency: "EUR", maximum_amount: 10, colour: "red" })),
      ),
    );
    const got = await getJson<Resource>(["get", "wdel", "defaults"]);
    expect(got.spec.state).toBe("active");
    expect(got.spec.revocable).toBe(true);
    expect(got.spec.conditions).toEqual([]);
    expect(got.spec.scope).toEqual({ currency: "EUR", maximum_amount: 10 });
  });

  it.each([
    // --validate=false: the API server itself refuses these, not kubectl's client-side check.
    ["a string amount", "spec.scope.maximum_amount", (s: Record<string, unknown>) => (s.scope = { currency: "EUR", maximum_amount: "ten" })],
    ["a negative amount", "spec.scope.maximum_amount", (s: Record<string, unknown>) => (s.scope = { currency: "EUR", maximum_amount: -1 })],
    ["a lower-case currency", "spec.scope.currency", (s: Record<string, unknown>) => (s.scope = { currency: "eur" })],
    ["an unknown state", "spec.state", (s: Record<string, unknown>) => (s.state = "paused")],
    ["an unknown principal type", "spec.principal.type", (s: Record<string, unknown>) => (s.principal = { type: "robot", id: "x" })],
    ["a time that is not RFC 3339", "spec.expires_at", (s: Record<string, unknown>) => (s.expires_at = "tomorrow")],
    ["a missing scope", "spec.scope: Required value", (s: Record<string, unknown>) => delete s.scope],
    [
      "an unknown condition type",
      /spec\.conditions(\[0\])?\.type: Unsupported value/,
      (s: Record<string, unknown>) => (s.conditions = [{ type: "full_moon" }]),
    ],
    ["a risk score above 100", /spec\.conditions(\[0\])?\.value/, (s: Record<string, unknown>) => (s.conditions = [{ type: "max_risk_score", value: 101 }])],
    [
      "a private key in a public key",
      "spec.principal.public_key",
      (s: Record<string, unknown>) =>
        (s.principal = { type: "business", id: "x", public_key: { kty: "OKP", crv: "Ed25519", x: "A".repeat(43), d: "B".repeat(43) } }),
    ],
  ])("refuses a Delegation with %s", async (_what, field, patch) => {
    const r = await kubectl(["create", "--dry-run=server", "--validate=false", "-f", "-"], delegation("invalid", patch));
    expect(r.code, r.stdout).not.toBe(0);
    expect(r.stderr).toMatch(/is invalid/);
    expect(r.stderr).toMatch(field);
  });

  it("accepts the mandate form of a Delegation (mandate and agent only); refuses it without agent or sdJwt", async () => {
    const mandated = (spec: Record<string, unknown>) =>
      stringify({ apiVersion: "writ.dev/v1alpha1", kind: "Delegation", metadata: { name: "mandated" }, spec });
    ok(
      await kubectl(
        ["create", "--dry-run=server", "--validate=false", "-f", "-"],
        mandated({ mandate: { sdJwt: "eyJ.eyJ.sig~WyJ~eyJ.eyJ.sig", nonce: "nonce-1" }, agent: { agent_id: "agent_test" } }),
      ),
    );
    const noAgent = await kubectl(["create", "--dry-run=server", "--validate=false", "-f", "-"], mandated({ mandate: { sdJwt: "x~y" } }));
    expect(noAgent.code).not.toBe(0);
    expect(noAgent.stderr).toMatch(/is invalid/);
    const noToken = await kubectl(["create", "--dry-run=server", "--validate=false", "-f", "-"], mandated({ mandate: {}, agent: { agent_id: "agent_test" } }));
    expect(noToken.code).not.toBe(0);
    expect(noToken.stderr).toContain("spec.mandate.sdJwt: Required value");
  });

  it("refuses an IntentAgreement without delegationRef and a Subscription to a plain-http URL", async () => {
    const ia = await kubectl(
      ["create", "--dry-run=server", "--validate=false", "-f", "-"],
      stringify({
        apiVersion: "writ.dev/v1alpha1",
        kind: "IntentAgreement",
        metadata: { name: "no-ref" },
        spec: {
          agreement_id: "a",
          state: "proposed",
          mandates: [{ intent_id: "i", principal: { type: "human", id: "p" }, agent: { agent_id: "x" }, currency: "EUR" }],
          events: [],
          ledger: [],
          ledger_sequence: 0,
          ledger_as_of: "2026-11-20T09:00:00Z",
        },
      }),
    );
    expect(ia.code).not.toBe(0);
    expect(ia.stderr).toContain("spec.delegationRef: Required value");
    const sub = (url: string) =>
      stringify({ apiVersion: "writ.dev/v1alpha1", kind: "Subscription", metadata: { name: "s" }, spec: { agentId: "a", webhookUrl: url } });
    const http = await kubectl(["create", "--dry-run=server", "--validate=false", "-f", "-"], sub("http://hooks.example.com/x"));
    expect(http.code).not.toBe(0);
    expect(http.stderr).toContain("spec.webhookUrl");
    ok(await kubectl(["create", "--dry-run=server", "-f", "-"], sub("http://localhost:8080/hook")));
  });

  it("bumps metadata.generation on a spec change, not on a status write", async () => {
    const name = SAMPLE_NAMES.delegation;
    const before = await getJson<Resource>(["get", "wdel", name]);
    ok(await kubectl(["patch", "wdel", name, "--type=merge", "-p", JSON.stringify({ spec: { purpose: "Office supplies only." } })]));
    const afterSpec = await getJson<Resource>(["get", "wdel", name]);
    expect(afterSpec.metadata.generation).toBe(before.metadata.generation + 1);

    // Status written through the main resource is ignored; through the subresource it is kept.
    ok(await kubectl(["patch", "wdel", name, "--type=merge", "-p", JSON.stringify({ status: { phase: "Revoked" } })]));
    expect((await getJson<Resource>(["get", "wdel", name])).status?.phase).toBeUndefined();
    ok(
      await kubectl([
        "patch",
        "wdel",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({ status: { phase: "Active", observedGeneration: afterSpec.metadata.generation, expiresAt: "2026-11-27T09:00:00Z" } }),
      ]),
    );
    const afterStatus = await getJson<Resource>(["get", "wdel", name]);
    expect(afterStatus.metadata.generation).toBe(afterSpec.metadata.generation);
    expect(afterStatus.status).toMatchObject({ phase: "Active", observedGeneration: afterSpec.metadata.generation });

    const badStatus = await kubectl(["patch", "wdel", name, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { phase: "Sleeping" } })]);
    expect(badStatus.code).not.toBe(0);
    expect(badStatus.stderr).toContain("status.phase");
  });
});
