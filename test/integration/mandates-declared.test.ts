/**
 * A payment mandate declared as a Kubernetes resource (a Delegation in the mandate form),
 * reconciled by the controller's reconcilers from a local manifest folder (as `writ dev` wires
 * them): verified and recorded (Ready=True, the finalizer and record id set, the mandate row
 * stored); one from an unknown issuer is refused with its reason and writes nothing; removing
 * the file revokes the recorded delegation through the finalizer. Another mandate in a resource
 * that recorded one is refused while the status keeps saying what verify answers (the first).
 */
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { generateSigner, keyId, signerFromSeed } from "../../src/core/jose/index.js";
import { localController } from "../../src/dev/local-controller.js";
import { startLocalManifests, type LocalManifests } from "../../src/sources/local/index.js";
import type { KubeObject } from "../../src/sources/kubernetes/objects.js";
import { insertAgent } from "../../src/store/agents.js";
import { insertIssuerKey } from "../../src/store/issuer-keys.js";
import { createOrg } from "../../src/store/orgs.js";
import { openPaymentMandateClaims, presentMandate } from "../helpers/ap2-mandates.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

const signer = signerFromSeed("33".repeat(32));
const wallet = generateSigner("ES256");
const agentKey = generateSigner("EdDSA");
const AGENT = "agent-shoes";

type Condition = { type: string; status: string; reason: string; message: string };
const ready = (o: KubeObject | undefined) => (o?.status as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === "Ready");

function manifest(name: string, sdJwt: string): string {
  return stringify({
    apiVersion: "writ.dev/v1alpha1",
    kind: "Delegation",
    metadata: { name, namespace: "default" },
    spec: { mandate: { sdJwt }, agent: { agent_id: AGENT } },
  });
}

async function presentation(issuer = wallet): Promise<string> {
  const nowSec = Math.floor(Date.now() / 1000);
  return presentMandate({
    issuer,
    holder: agentKey,
    audience: "writ",
    nonce: "gitops-1",
    kbIatSec: nowSec,
    claims: openPaymentMandateClaims(agentKey, { iatSec: nowSec - 60, expSec: nowSec + 3600 }),
  });
}

describe("a payment mandate declared as a Delegation", () => {
  let db: TestDatabase;
  let dir: string;
  let source: LocalManifests | undefined;
  const lines: string[] = [];
  const get = (name: string) => source?.store.get("delegations", "default", name);

  beforeAll(async () => {
    db = await createTestDatabase();
    const now = new Date();
    const operator = await createOrg(db.pool, { name: "Shoe Buyer Inc", org_type: "agent_operator" }, now);
    const walletOrg = await createOrg(db.pool, { name: "Wallet", org_type: "wallet" }, now);
    await insertAgent(
      db.pool,
      {
        agent_id: AGENT,
        org_id: operator.org_id,
        principal_id: "prn_user",
        verification_level: "operator_verified",
        public_key: agentKey.publicJwk,
        fingerprint: keyId(agentKey.publicJwk),
      },
      now,
    );
    await insertIssuerKey(db.pool, { kid: wallet.kid, thumbprint: wallet.kid, orgId: walletOrg.org_id, publicKey: wallet.publicJwk }, now);
    dir = await mkdtemp(join(tmpdir(), "writ-mandates-declared-"));
    await writeFile(join(dir, "mandate.yaml"), manifest("shoes-mandate", await presentation()));
    await writeFile(join(dir, "rogue.yaml"), manifest("rogue-mandate", await presentation(generateSigner("ES256"))));
    source = await startLocalManifests({
      dir,
      orgId: operator.org_id,
      startReconcilers: localController({ databaseUrl: db.url, logSigner: signer, print: (l) => lines.push(l) }),
      print: (l) => lines.push(l),
      debounceMs: 50,
      rescanMs: 1000,
    });
  });

  afterAll(async () => {
    await source?.stop();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("verifies and records it: Ready=True, the record id annotated, the mandate and its delegation stored", async () => {
    await expect.poll(() => ready(get("shoes-mandate"))?.status, { timeout: 20_000, interval: 100 }).toBe("True");
    const obj = get("shoes-mandate");
    const id = obj?.metadata.annotations?.["writ.dev/record-id"];
    expect(id).toMatch(/^ap2-[0-9a-f]{32}$/);
    expect(obj?.metadata.finalizers).toEqual(["writ.dev/revoke"]);
    expect(ready(obj)?.message).toContain(`payment mandate recorded as delegation ${String(id)}`);
    const rows = await db.pool.query<{ delegation_id: string; agent_id: string; issuer_kid: string }>(
      "SELECT delegation_id, agent_id, issuer_kid FROM mandates",
    );
    expect(rows.rows).toEqual([{ delegation_id: id, agent_id: AGENT, issuer_kid: wallet.kid }]);
    const d = await db.pool.query<{ record: { scope: unknown; expires_at: string } }>("SELECT record FROM delegations WHERE delegation_id = $1", [id]);
    expect(d.rows[0]?.record.scope).toEqual({
      currency: "USD",
      maximum_amount: 50,
      cumulative_maximum: 50,
      action_types: ["purchase"],
      merchants: ["merchant_shoes"],
    });
  });

  it("refuses a mandate from an unknown issuer with its reason and stores nothing for it", async () => {
    await expect.poll(() => ready(get("rogue-mandate"))?.reason, { timeout: 20_000, interval: 100 }).toBe("SPEC_INVALID");
    expect(ready(get("rogue-mandate"))?.message).toMatch(/mandate refused: ISSUER_UNKNOWN: /);
    expect(get("rogue-mandate")?.metadata.finalizers ?? []).toEqual([]);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM mandates")).rows[0]).toEqual({ n: 1 });
  });

  it("another mandate in the same resource is refused, and the status says the recorded one is what verify still answers", async () => {
    const id = get("shoes-mandate")?.metadata.annotations?.["writ.dev/record-id"];
    await writeFile(join(dir, "mandate.yaml"), manifest("shoes-mandate", await presentation()));
    await expect.poll(() => ready(get("shoes-mandate"))?.reason, { timeout: 20_000, interval: 100 }).toBe("SPEC_INVALID");
    expect(ready(get("shoes-mandate"))?.message).toContain(`spec.mandate is immutable: this resource recorded ${String(id)}`);
    expect(ready(get("shoes-mandate"))?.message).toContain(
      `verify still answers with the record stored before: delegation ${String(id)}, effective status active`,
    );
    expect((get("shoes-mandate")?.status as { phase?: string } | undefined)?.phase).toBe("Active");
  });

  it("a removed file revokes the recorded delegation through the finalizer", async () => {
    const id = get("shoes-mandate")?.metadata.annotations?.["writ.dev/record-id"];
    await unlink(join(dir, "mandate.yaml"));
    await expect
      .poll(
        async () =>
          (await db.pool.query<{ revoked: boolean }>("SELECT revoked_at IS NOT NULL AS revoked FROM delegations WHERE delegation_id = $1", [id])).rows[0]
            ?.revoked,
        { timeout: 20_000, interval: 100 },
      )
      .toBe(true);
  });
});
