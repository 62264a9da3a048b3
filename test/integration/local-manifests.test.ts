/**
 * Local manifests (src/sources/local) against a real Postgres: a folder of live copies of the
 * samples reconciles to Ready=True through the controller's reconcilers (wired as `writ dev`
 * wires them, src/dev/local-controller.ts) with its rows stored; editing a file to `state:
 * revoked` revokes the record (and the data plane's revocation index hears it); a malformed
 * file is reported and changes nothing; a removed file deletes its resource through the
 * finalizer (revoked, row kept), also when removed while the source was stopped (the persisted
 * state).
 */
import { mkdtemp, readFile, rename, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SAMPLE_NAMES } from "../../src/core/samples/index.js";
import { renderSamples } from "../../src/manifests/samples.js";
import { signerFromSeed } from "../../src/core/jose/index.js";
import { localController } from "../../src/dev/local-controller.js";
import { registerManifestAgents } from "../../src/dev/manifest-agents.js";
import { startLocalManifests, type LocalManifests } from "../../src/sources/local/index.js";
import type { KubeObject } from "../../src/sources/kubernetes/objects.js";
import { createOrg, type Org } from "../../src/store/orgs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const SEED = "22".repeat(32);
const signer = signerFromSeed(SEED);
const FILES = {
  delegation: "writ.dev_v1alpha1_delegation.yaml",
  chained: "writ.dev_v1alpha1_delegation_chained.yaml",
  agreement: "writ.dev_v1alpha1_intentagreement.yaml",
  subscription: "writ.dev_v1alpha1_subscription.yaml",
};

type Status = { phase?: string; conditions?: { type: string; status: string; reason: string; message: string }[] };
const ready = (o: KubeObject | undefined) => (o?.status as Status | undefined)?.conditions?.find((c) => c.type === "Ready");

describe("local manifests", () => {
  let db: TestDatabase;
  let server: TestServer;
  let org: Org;
  let dir: string;
  let stateFile: string;
  let source: LocalManifests | undefined;
  const lines: string[] = [];

  const start = () =>
    startLocalManifests({
      dir,
      orgId: org.org_id,
      startReconcilers: localController({ databaseUrl: db.url, logSigner: signer, print: (l) => lines.push(l) }),
      stateFile,
      print: (l) => lines.push(l),
      debounceMs: 50,
      rescanMs: 1000,
      beforeApply: async (objects) => {
        for (const l of await registerManifestAgents(db.pool, objects, { orgId: org.org_id, signer, logOptions: { now: new Date() }, now: new Date() }))
          lines.push(l);
      },
    });
  const get = (plural: string, name: string) => source?.store.get(plural, "default", name);
  // A file's new content in one step (a hidden temporary file renamed over it), as editors
  // save: writeFile truncates first, and on a loaded machine the empty file can outlast the
  // sync's confirming read (150 ms), which takes it for a deletion (a revocation). Mid-save
  // reads are sync.test.ts's subject, not this file's.
  let saves = 0;
  const save = async (file: string, text: string) => {
    const tmp = join(dir, `.save-${++saves}`);
    await writeFile(tmp, text);
    await rename(tmp, file);
  };
  const output = () => lines.join("\n");

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startTestServer({ DATABASE_URL: db.url, SVC_LOG_SIGNING_SEED: SEED }, { pool: db.pool });
    org = await createOrg(db.pool, { name: "Acme Corp", org_type: "agent_operator" }, new Date());
    dir = await mkdtemp(join(tmpdir(), "writ-local-manifests-"));
    stateFile = join(dir, ".state.json");
    const at = new Date(Math.floor((Date.now() - 2 * 3600_000) / 60_000) * 60_000).toISOString().replace(".000Z", "Z");
    for (const f of await renderSamples(at)) await writeFile(join(dir, f.name), f.content);
    source = await start();
  });

  afterAll(async () => {
    await source?.stop();
    await server?.close();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("reconciles the folder to Ready=True and stores the records", async () => {
    const names: [string, string][] = [
      ["delegations", SAMPLE_NAMES.delegation],
      ["delegations", SAMPLE_NAMES.chainedDelegation],
      ["intentagreements", SAMPLE_NAMES.agreement],
      ["subscriptions", SAMPLE_NAMES.subscription],
    ];
    await expect.poll(() => names.map(([p, n]) => ready(get(p, n))?.status), { timeout: 20_000, interval: 100 }).toEqual(["True", "True", "True", "True"]);
    const rows = await db.pool.query<{ delegation_id: string; org_id: string; revoked_at: Date | null }>(
      "SELECT delegation_id, org_id, revoked_at FROM delegations ORDER BY delegation_id",
    );
    expect(rows.rows).toEqual([
      { delegation_id: "del_acme_procurement", org_id: org.org_id, revoked_at: null },
      { delegation_id: "del_acme_procurement_travel", org_id: org.org_id, revoked_at: null },
    ]);
    const agreements = await db.pool.query("SELECT agreement_id, org_id FROM agreements");
    expect(agreements.rows).toEqual([{ agreement_id: expect.any(String), org_id: org.org_id }]);
    const subs = await db.pool.query("SELECT org_id, active FROM subscriptions");
    expect(subs.rows).toEqual([{ org_id: org.org_id, active: true }]);
    expect(output()).toContain("agent agent_procurement registered");
    expect(output()).toMatch(/Delegation default\/acme-procurement: Ready=True Reconciled: stored as delegation del_acme_procurement/);
    // The finalizer and the record id, as on a cluster.
    const root = get("delegations", SAMPLE_NAMES.delegation);
    expect(root?.metadata.finalizers).toEqual(["writ.dev/revoke"]);
    expect(root?.metadata.annotations?.["writ.dev/record-id"]).toBe("del_acme_procurement");
  });

  it("reports a malformed file without crashing and without touching what it declared", async () => {
    const subFile = join(dir, FILES.subscription);
    const good = await readFile(subFile, "utf8");
    await save(join(dir, "broken.yaml"), "apiVersion: writ.dev/v1alpha1\nkind: Delegation\nspec: [unclosed\n");
    await save(subFile, `${good}\n  : : bad\n`);
    await expect.poll(() => output(), { timeout: 10_000, interval: 100 }).toMatch(/broken\.yaml: YAML error at line \d+/);
    await expect
      .poll(() => output(), { timeout: 10_000, interval: 100 })
      .toMatch(/writ\.dev_v1alpha1_subscription\.yaml: YAML error.*what it declared before is kept/);
    await source?.sync();
    expect(ready(get("subscriptions", SAMPLE_NAMES.subscription))?.status).toBe("True");
    expect((await db.pool.query("SELECT active FROM subscriptions")).rows).toEqual([{ active: true }]);
    await unlink(join(dir, "broken.yaml"));
    await save(subFile, good);
  });

  it("revokes a Delegation edited to state: revoked, and the data plane's index hears it", async () => {
    const file = join(dir, FILES.delegation);
    const text = await readFile(file, "utf8");
    expect(text).toContain("state: active");
    await save(file, text.replace("state: active", "state: revoked"));
    const org =
      (await db.pool.query<{ org_id: string | null }>("SELECT org_id FROM delegations WHERE delegation_id = 'del_acme_procurement'")).rows[0]?.org_id ?? null;
    await expect.poll(() => server.app.verifyRuntime?.index.isDelegationRevoked(org, "del_acme_procurement"), { timeout: 10_000, interval: 50 }).toBe(true);
    const rows = await db.pool.query<{ delegation_id: string; revoked_at: Date | null }>(
      "SELECT delegation_id, revoked_at FROM delegations ORDER BY delegation_id",
    );
    expect(rows.rows.map((r) => [r.delegation_id, r.revoked_at !== null])).toEqual([
      ["del_acme_procurement", true],
      ["del_acme_procurement_travel", true], // the store revokes everything below
    ]);
    await expect
      .poll(() => (get("delegations", SAMPLE_NAMES.delegation)?.status as Status | undefined)?.phase, { timeout: 10_000, interval: 50 })
      .toBe("Revoked");
    expect(get("delegations", SAMPLE_NAMES.delegation)?.metadata.generation).toBe(2);
    await expect.poll(() => ready(get("delegations", SAMPLE_NAMES.chainedDelegation))?.reason, { timeout: 10_000, interval: 50 }).toBe("CHAIN_LINK_REVOKED");
  });

  it("treats a removed file as a deletion: revoked through the finalizer, row kept", async () => {
    await unlink(join(dir, FILES.agreement));
    await expect.poll(() => get("intentagreements", SAMPLE_NAMES.agreement), { timeout: 10_000, interval: 50 }).toBeUndefined();
    const rows = await db.pool.query<{ revoked_at: Date | null; revoked_reason: string | null }>("SELECT revoked_at, revoked_reason FROM agreements");
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]?.revoked_at).not.toBeNull();
    expect(output()).toContain("IntentAgreement default/acme-procurement-agreement: removed");
    // The serving process learns it through the change notice (LISTEN), a moment after the row.
    const stored = (await db.pool.query<{ agreement_id: string; org_id: string | null }>("SELECT agreement_id, org_id FROM agreements")).rows[0];
    const agreementId = String(stored?.agreement_id);
    await expect
      .poll(() => server.app.verifyRuntime?.index.isAgreementRevoked(stored?.org_id ?? null, agreementId), { timeout: 5_000, interval: 20 })
      .toBe(true);
  });

  it("remembers its resources across restarts: a file removed while stopped is a deletion at the next start", async () => {
    await source?.stop();
    source = undefined;
    await unlink(join(dir, FILES.subscription));
    source = await start();
    await expect
      .poll(async () => (await db.pool.query<{ active: boolean }>("SELECT active FROM subscriptions")).rows, { timeout: 15_000, interval: 100 })
      .toEqual([{ active: false }]);
    await expect.poll(() => get("subscriptions", SAMPLE_NAMES.subscription), { timeout: 10_000, interval: 50 }).toBeUndefined();
    // The root delegation kept its uid and generation through the restart.
    expect(get("delegations", SAMPLE_NAMES.delegation)?.metadata.generation).toBe(2);
  });
});
