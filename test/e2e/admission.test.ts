/**
 * The admission webhooks of `writ controller` (a child process serving HTTPS on 127.0.0.1 with a
 * test CA) called by a real kube-apiserver 1.20 (envtest) through a ValidatingWebhookConfiguration
 * and a MutatingWebhookConfiguration (`clientConfig.url`, `caBundle`, failurePolicy Fail):
 * declarations that can never be valid are refused by the API server with the controller's own
 * messages (cross-field times, private key members, a changed id, a signature that does not
 * verify, a chain that widens, a silent extension of a stored grant), nothing of them is stored;
 * a new resource gets the finalizer and the record-id annotation from the mutating webhook;
 * valid ones pass and reconcile (the controller's own finalizer writes pass the webhook);
 * a payment mandate in the Delegation's mandate form passes with its derived record id and keeps
 * it; deletion works; re-declaring a revoked id is accepted with a warning saying that revocation is
 * final; with the webhook down, creates are refused (fail closed).
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SAMPLE_NAMES } from "../../src/core/samples/index.js";
import { generateSigner, keyId } from "../../src/core/jose/index.js";
import { freePort } from "../../src/dev/free-port.js";
import { insertAgent } from "../../src/store/agents.js";
import { insertIssuerKey } from "../../src/store/issuer-keys.js";
import { createOrg } from "../../src/store/orgs.js";
import { openPaymentMandateClaims, presentMandate } from "../helpers/ap2-mandates.js";
import { startControllerProcess, type ControllerProcess } from "../helpers/controller-process.js";
import { ensureEnvtest, startEnvtest, type CommandResult, type Envtest } from "../helpers/envtest.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { ok, setUpSampleTenant, type SampleManifest, type SampleTenant } from "../helpers/sample-tenant.js";
import { makeWebhookCerts, webhookConfigurations } from "../helpers/webhook-certs.js";
import { stopAll } from "../helpers/teardown.js";

const NS = "acme";
const DELEGATION = "writ.dev_v1alpha1_delegation.yaml";
const CHAINED = "writ.dev_v1alpha1_delegation_chained.yaml";
const AGREEMENT = "writ.dev_v1alpha1_intentagreement.yaml";

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The command must fail with the webhook's refusal; returns stderr. */
function refused(r: CommandResult): string {
  expect(r.code, `expected a refusal, got:\n${r.stdout}`).not.toBe(0);
  expect(r.stderr).toMatch(/admission webhook "(validate|screen)\.writ\.dev" denied the request/);
  return r.stderr;
}

describe("admission webhooks served by writ controller", () => {
  let env: Envtest;
  let db: TestDatabase;
  let tenant: SampleTenant;
  let controller: ControllerProcess;
  let dir: string;
  const kubectl = (args: string[], input?: string) => env.kubectl(args, input === undefined ? {} : { input });
  const apply = (m: SampleManifest) => kubectl(["apply", "-n", NS, "-f", "-"], stringify(m));
  const named = async (file: string, name: string, id?: string) => {
    const m = await tenant.sample(file);
    m.metadata = { name };
    if (id !== undefined) m.spec[m.kind === "IntentAgreement" ? "agreement_id" : "delegation_id"] = id;
    return m;
  };
  const notFound = async (kind: string, name: string) => {
    const r = await kubectl(["get", kind, name, "-n", NS]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("NotFound");
  };
  const readyReason = async (kind: string, name: string) => {
    const r = JSON.parse(ok(await kubectl(["get", kind, name, "-n", NS, "-o", "json"]))) as { status?: { conditions?: { type: string; reason: string }[] } };
    return r.status?.conditions?.find((c) => c.type === "Ready")?.reason;
  };

  beforeAll(async () => {
    env = await startEnvtest({ binDir: await ensureEnvtest() });
    db = await createTestDatabase();
    tenant = await setUpSampleTenant(env, db, NS);
    dir = await mkdtemp(join(tmpdir(), "writ-e2e-webhook-"));
    const certs = await makeWebhookCerts(dir);
    const port = await freePort();
    controller = await startControllerProcess({
      kubeconfigPath: env.kubeconfigPath,
      databaseUrl: db.url,
      podName: "ctl-admission",
      env: { WRIT_WEBHOOK_PORT: String(port), WRIT_WEBHOOK_CERT_DIR: certs.certDir },
    });
    ok(
      await kubectl(
        ["apply", "-f", "-"],
        webhookConfigurations(`https://127.0.0.1:${port}`, certs.caBundle)
          .map((d) => stringify(d))
          .join("---\n"),
      ),
    );
    // The API server reads webhook configurations through an informer: wait until it calls ours.
    const probe = await named(DELEGATION, "probe");
    (probe.spec as { expires_at: string }).expires_at = "2000-01-01T00:00:00Z";
    for (let i = 0; ; i++) {
      const r = await kubectl(["apply", "--dry-run=server", "-n", NS, "-f", "-"], stringify(probe));
      if (r.code !== 0 && r.stderr.includes("writ.dev")) break;
      if (i > 100) throw new Error(`the webhook is not called: ${r.stderr}${r.stdout}`);
      await delay(200);
    }
  }, 30 * 60_000);

  afterAll(() => stopAll(controller, db, env, tenant, dir), 120_000);

  it("refuses a Delegation whose expires_at is not after granted_at, saying so", async () => {
    const m = await named(DELEGATION, "backwards", "del_backwards");
    m.spec.expires_at = "2020-01-01T00:00:00Z";
    m.spec.granted_at = "2020-02-01T00:00:00Z";
    const err = refused(await apply(m));
    expect(err).toContain("SPEC_INVALID: spec.expires_at (2020-01-01T00:00:00Z) must be after spec.granted_at (2020-02-01T00:00:00Z)");
    await notFound("wdel", "backwards");
  });

  it("refuses a public key carrying its private member d, naming the member instead of the schema's (not)", async () => {
    const m = await named(DELEGATION, "leaky", "del_leaky");
    (m.spec.principal as { public_key: Record<string, string> }).public_key.d = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";
    const err = refused(await apply(m));
    expect(err).toContain('spec.principal.public_key: a public key must not carry its private member "d"');
    expect(err).not.toContain("must not validate the schema");
    await notFound("wdel", "leaky");
  });

  it("refuses a sub-delegation whose chain widens its parent, naming the field", async () => {
    const m = await named(CHAINED, "wide", "del_wide");
    (m.spec.scope as Record<string, unknown>).maximum_amount = 900;
    const err = refused(await apply(m));
    expect(err).toContain("CHAIN_SCOPE_WIDENED");
    expect(err).toContain("maximum_amount");
    await notFound("wdel", "wide");
  });

  it("refuses an agreement whose mandate signature does not verify", async () => {
    const m = await named(AGREEMENT, "tampered");
    const mandates = m.spec.mandates as { maximum_amount: number }[];
    (mandates[0] as { maximum_amount: number }).maximum_amount = 9999;
    const err = refused(await apply(m));
    expect(err).toContain("SIGNATURE_INVALID: spec.mandates[0] (intent int_office_supplies): the signature does not verify");
    await notFound("wia", "tampered");
  });

  it("adds the finalizer and the record-id annotation at creation (one write per resource saved)", async () => {
    const m = await named(DELEGATION, "defaulted", "del_defaulted");
    const created = JSON.parse(ok(await kubectl(["create", "--dry-run=server", "-n", NS, "-o", "json", "-f", "-"], stringify(m)))) as {
      metadata: { finalizers?: string[]; annotations?: Record<string, string> };
    };
    expect(created.metadata.finalizers).toEqual(["writ.dev/revoke"]);
    expect(created.metadata.annotations?.["writ.dev/record-id"]).toBe("del_defaulted");
  });

  it("admits valid declarations, which the controller reconciles through the webhook (its finalizer writes pass)", async () => {
    ok(await kubectl(["apply", "-n", NS, "-f", tenant.samples]));
    ok(
      await kubectl([
        "wait",
        "-n",
        NS,
        "--for=condition=Ready",
        "--timeout=60s",
        `delegation/${SAMPLE_NAMES.delegation}`,
        `delegation/${SAMPLE_NAMES.chainedDelegation}`,
        `intentagreement/${SAMPLE_NAMES.agreement}`,
      ]),
    );
    const root = JSON.parse(ok(await kubectl(["get", "wdel", SAMPLE_NAMES.delegation, "-n", NS, "-o", "json"]))) as { metadata: { finalizers?: string[] } };
    expect(root.metadata.finalizers).toContain("writ.dev/revoke");
  });

  it("admits a payment mandate declared as a Delegation (the mandate form), recorded by the controller under the id the webhook annotated; another mandate on it is refused", async () => {
    const now = new Date();
    const walletOrg = await createOrg(db.pool, { name: "Wallet", org_type: "wallet" }, now);
    const wallet = generateSigner("ES256");
    const agentKey = generateSigner("EdDSA");
    await insertIssuerKey(db.pool, { kid: wallet.kid, thumbprint: wallet.kid, orgId: walletOrg.org_id, publicKey: wallet.publicJwk }, now);
    const registered = await insertAgent(
      db.pool,
      {
        agent_id: "agent_shoes",
        org_id: tenant.org.org_id,
        principal_id: "prn_acme",
        verification_level: "operator_verified",
        public_key: agentKey.publicJwk,
        fingerprint: keyId(agentKey.publicJwk),
      },
      now,
    );
    expect(registered.ok).toBe(true);
    const nowSec = Math.floor(Date.now() / 1000);
    const present = async (nonce: string) =>
      presentMandate({
        issuer: wallet,
        holder: agentKey,
        audience: "writ",
        nonce,
        kbIatSec: nowSec,
        claims: openPaymentMandateClaims(agentKey, { iatSec: nowSec - 60, expSec: nowSec + 3600 }),
      });
    const mandated = (sdJwt: string, extra: Record<string, unknown> = {}) =>
      stringify({
        apiVersion: "writ.dev/v1alpha1",
        kind: "Delegation",
        metadata: { name: "shoes-mandate" },
        spec: { mandate: { sdJwt }, agent: { agent_id: "agent_shoes" }, ...extra },
      });

    const shapeless = refused(await kubectl(["apply", "-n", NS, "-f", "-"], mandated(await present("n-0"), { purpose: "anything" })));
    expect(shapeless).toContain("spec.purpose: the mandate form holds only mandate, agent and state");
    ok(await kubectl(["apply", "-n", NS, "-f", "-"], mandated(await present("n-1"))));
    ok(await kubectl(["wait", "-n", NS, "--for=condition=Ready", "--timeout=60s", "delegation/shoes-mandate"]));
    const obj = JSON.parse(ok(await kubectl(["get", "wdel", "shoes-mandate", "-n", NS, "-o", "json"]))) as {
      metadata: { annotations: Record<string, string> };
    };
    const id = obj.metadata.annotations["writ.dev/record-id"];
    expect(id).toMatch(/^ap2-[0-9a-f]{32}$/);
    expect((await db.pool.query("SELECT delegation_id FROM mandates WHERE agent_id = 'agent_shoes'")).rows).toEqual([{ delegation_id: id }]);
    const other = refused(await kubectl(["apply", "-n", NS, "-f", "-"], mandated(await present("n-2"))));
    expect(other).toContain(`spec.mandate is immutable: this resource recorded ${id}; another mandate`);
  });

  it("refuses a changed delegation_id and a silent extension of the stored grant; a metadata change passes", async () => {
    const idChange = refused(
      await kubectl(["patch", "wdel", SAMPLE_NAMES.delegation, "-n", NS, "--type=merge", "-p", '{"spec":{"delegation_id":"del_other"}}']),
    );
    expect(idChange).toContain("spec.delegation_id is immutable: this resource declared del_acme_procurement");
    const m = await tenant.sample(CHAINED);
    const later = new Date(Date.parse(m.spec.expires_at as string) + 3600_000).toISOString().replace(".000Z", "Z");
    const extension = refused(
      await kubectl(["patch", "wdel", SAMPLE_NAMES.chainedDelegation, "-n", NS, "--type=merge", "-p", JSON.stringify({ spec: { expires_at: later } })]),
    );
    expect(extension).toContain("refused as a silent extension of the stored grant: expires_at moves later");
    ok(await kubectl(["label", "wdel", SAMPLE_NAMES.delegation, "-n", NS, "team=procurement"]));
    expect(await readyReason("wdel", SAMPLE_NAMES.chainedDelegation)).toBe("Reconciled");
  });

  it("lets a deletion through; re-declaring the revoked id is admitted with a warning that revocation is final", async () => {
    ok(await kubectl(["delete", "wdel", SAMPLE_NAMES.chainedDelegation, "-n", NS, "--timeout=60s"]));
    await notFound("wdel", SAMPLE_NAMES.chainedDelegation);
    const again = await apply(await tenant.sample(CHAINED));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("Warning: spec.delegation_id del_acme_procurement_travel was revoked at");
    expect(again.stderr).toContain("revocation is final, so this resource will stay revoked: a new grant needs a new delegation_id");
  });

  it("fails closed: with the webhook down, a create is refused", async () => {
    await controller.stop();
    const r = await apply(await named(DELEGATION, "while-down", "del_while_down"));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/failed calling webhook "(screen|validate)\.writ\.dev"/);
    await notFound("wdel", "while-down");
  });
});
