/**
 * The operator path of issue 27, hole 6: an IntentAgreement declared (through the controller's
 * reconcilers, fed from a local folder as `writ dev` feeds them) with an acknowledgement that
 * names an unrelated wallet as `psp`, signed by a key the operator made, is not stored: its
 * status says ACKNOWLEDGEMENT_KEY_UNREGISTERED and no agreement row exists. The same
 * acknowledgement signed by a key the wallet registered is stored.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mandateHash, signAcknowledgement, type Mandate } from "../../src/core/agreement/index.js";
import { generateSigner, keyId, signerFromSeed, type Signer } from "../../src/core/jose/index.js";
import { SAMPLE_NAMES, buildSamples, type Manifest } from "../../src/core/samples/index.js";
import { localController } from "../../src/dev/local-controller.js";
import { registerManifestAgents } from "../../src/dev/manifest-agents.js";
import { startLocalManifests, type LocalManifests } from "../../src/sources/local/index.js";
import type { KubeObject } from "../../src/sources/kubernetes/objects.js";
import { insertAckKey } from "../../src/store/ack-keys.js";
import { createOrg, type Org } from "../../src/store/orgs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

const signer = signerFromSeed("33".repeat(32));
type Status = { conditions?: { type: string; status: string; reason: string; message: string }[] };
const ready = (o: KubeObject | undefined) => (o?.status as Status | undefined)?.conditions?.find((c) => c.type === "Ready");

describe("a declared agreement naming a party", () => {
  let db: TestDatabase;
  let org: Org;
  let wallet: Org;
  let dir: string;
  let source: LocalManifests | undefined;
  let samples: Manifest[];
  const lines: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    org = await createOrg(db.pool, { name: "Acme Corp", org_type: "agent_operator" }, new Date());
    wallet = await createOrg(db.pool, { name: "Unrelated Wallet", org_type: "wallet" }, new Date());
    dir = await mkdtemp(join(tmpdir(), "writ-ack-parties-"));
    const at = new Date(Math.floor((Date.now() - 2 * 3600_000) / 60_000) * 60_000).toISOString().replace(".000Z", "Z");
    samples = (await buildSamples(at)).map((s) => s.manifest);
  });
  afterAll(async () => {
    await source?.stop();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Writes the sample delegation and the sample agreement with a psp ack naming the wallet, signed by `by`. */
  async function declare(by: Signer): Promise<void> {
    const delegation = samples.find((m) => m.kind === "Delegation" && m.metadata.name === SAMPLE_NAMES.delegation);
    const agreement = structuredClone(samples.find((m) => m.kind === "IntentAgreement")) as Manifest & { spec: Record<string, unknown> };
    const spec = agreement.spec as { agreement_id: string; mandates: Mandate[] };
    const acks = [];
    for (const m of spec.mandates) {
      acks.push(
        await signAcknowledgement(
          { agreement_id: spec.agreement_id, mandate_hash: mandateHash(m), role: "psp", id: wallet.org_id, at: new Date(Date.now() - 60_000).toISOString() },
          by,
        ),
      );
    }
    agreement.spec.acknowledgements = acks;
    await writeFile(join(dir, "delegation.yaml"), JSON.stringify(delegation));
    await writeFile(join(dir, "agreement.yaml"), JSON.stringify(agreement));
  }

  it("refuses one signed by a key the operator made; stores one signed by the wallet's registered key", async () => {
    await declare(generateSigner());
    source = await startLocalManifests({
      dir,
      orgId: org.org_id,
      startReconcilers: localController({ databaseUrl: db.url, logSigner: signer, print: (l) => lines.push(l) }),
      stateFile: join(dir, ".state.json"),
      print: (l) => lines.push(l),
      debounceMs: 50,
      rescanMs: 1000,
      beforeApply: async (objects) => {
        for (const l of await registerManifestAgents(db.pool, objects, { orgId: org.org_id, signer, logOptions: { now: new Date() }, now: new Date() }))
          lines.push(l);
      },
    });
    const agreement = () => source?.store.get("intentagreements", "default", SAMPLE_NAMES.agreement);
    await expect.poll(() => ready(agreement())?.reason, { timeout: 20_000, interval: 100 }).toBe("ACKNOWLEDGEMENT_KEY_UNREGISTERED");
    expect(ready(agreement())?.message).toContain(`names organization ${wallet.org_id}, but its key`);
    expect((await db.pool.query("SELECT 1 FROM agreements")).rows).toEqual([]);

    const walletSigner = generateSigner();
    await insertAckKey(db.pool, { orgId: wallet.org_id, thumbprint: keyId(walletSigner.publicJwk), publicKey: walletSigner.publicJwk }, new Date());
    await declare(walletSigner);
    await expect.poll(() => ready(agreement())?.status, { timeout: 20_000, interval: 100 }).toBe("True");
    expect((await db.pool.query("SELECT org_id FROM agreements")).rows).toEqual([{ org_id: org.org_id }]);
  });
});
