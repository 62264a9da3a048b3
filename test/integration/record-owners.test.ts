/**
 * A resource acts only on the record it created (src/store/record-owners.ts,
 * src/controller/reconcilers/ownership.ts), driven through the local manifest source and the
 * controller's own reconcilers against a real Postgres (as test/integration/local-manifests.test.ts):
 * - two namespaces of ONE organization each declare a grant; the `writ.dev/record-id`
 *   annotation of team-b's resource is repointed at team-a's delegation (a metadata-only
 *   update, as `kubectl annotate` would make it); deleting team-b's resource then revokes
 *   team-b's own grant (the record it owns) and NOT team-a's;
 * - a resource of team-b that declares team-a's delegation id in full (here with `state:
 *   revoked`) is refused RECORD_NOT_OWNED and changes nothing;
 * - a manifest cannot set the annotation (the local source ignores it).
 */
import { mkdtemp, readFile, rename, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { signerFromSeed } from "../../src/core/jose/index.js";
import { localController } from "../../src/dev/local-controller.js";
import { registerManifestAgents } from "../../src/dev/manifest-agents.js";
import { renderSamples } from "../../src/manifests/samples.js";
import { startLocalManifests, type LocalManifests } from "../../src/sources/local/index.js";
import type { KubeObject } from "../../src/sources/kubernetes/objects.js";
import { createOrg, type Org } from "../../src/store/orgs.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

const SEED = "33".repeat(32);
const signer = signerFromSeed(SEED);
type Condition = { type: string; status: string; reason: string; message: string };
const condition = (o: KubeObject | undefined, type: string) =>
  ((o?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === type);

describe("a resource acts only on the record it created", () => {
  let db: TestDatabase;
  let org: Org;
  let dir: string;
  let source: LocalManifests | undefined;
  let base: Record<string, unknown>;
  const lines: string[] = [];
  const get = (ns: string, name: string) => source?.store.get("delegations", ns, name);
  const revoked = async (id: string) =>
    (await db.pool.query<{ r: boolean }>("SELECT revoked_at IS NOT NULL AS r FROM delegations WHERE delegation_id = $1", [id])).rows[0]?.r;
  let saves = 0;
  const save = async (file: string, doc: Record<string, unknown>) => {
    const tmp = join(dir, `.save-${++saves}`);
    await writeFile(tmp, stringify(doc));
    await rename(tmp, join(dir, file));
  };
  /** The sample root delegation as resource `name` of `namespace`, storing `id`. */
  const grant = (namespace: string, name: string, id: string, over: Record<string, unknown> = {}, annotations?: Record<string, string>) => {
    const doc = structuredClone(base) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    doc.metadata = { name, namespace, ...(annotations ? { annotations } : {}) };
    doc.spec = { ...doc.spec, delegation_id: id, ...over };
    return doc;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    org = await createOrg(db.pool, { name: "Acme Corp", org_type: "agent_operator" }, new Date());
    dir = await mkdtemp(join(tmpdir(), "writ-record-owners-"));
    const at = new Date(Math.floor((Date.now() - 2 * 3600_000) / 60_000) * 60_000).toISOString().replace(".000Z", "Z");
    const samples = await renderSamples(at);
    const file = samples.find((f) => f.name === "writ.dev_v1alpha1_delegation.yaml");
    base = parse(file?.content ?? "") as Record<string, unknown>;
    await save("team-a.yaml", grant("team-a", "grant", "del_team_a"));
    // A manifest's own record-id annotation is ignored: the controller writes it.
    await save("team-b.yaml", grant("team-b", "grant", "del_team_b", {}, { "writ.dev/record-id": "del_team_a" }));
    source = await startLocalManifests({
      dir,
      orgId: org.org_id,
      startReconcilers: localController({ databaseUrl: db.url, logSigner: signer, print: (l) => lines.push(l) }),
      print: (l) => lines.push(l),
      debounceMs: 50,
      rescanMs: 1000,
      beforeApply: async (objects) => {
        for (const l of await registerManifestAgents(db.pool, objects, { orgId: org.org_id, signer, logOptions: { now: new Date() }, now: new Date() }))
          lines.push(l);
      },
    });
  });

  afterAll(async () => {
    await source?.stop();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("stores each namespace's grant, owned by its resource; a manifest's annotation is not taken", async () => {
    await expect
      .poll(() => [condition(get("team-a", "grant"), "Ready")?.status, condition(get("team-b", "grant"), "Ready")?.status], { timeout: 20_000, interval: 100 })
      .toEqual(["True", "True"]);
    expect(get("team-b", "grant")?.metadata.annotations?.["writ.dev/record-id"]).toBe("del_team_b");
    const owners = await db.pool.query<{ record_id: string; namespace: string; uid: string }>(
      "SELECT record_id, namespace, uid FROM record_owners WHERE kind = 'delegation' ORDER BY record_id",
    );
    expect(owners.rows).toEqual([
      { record_id: "del_team_a", namespace: "team-a", uid: "Delegation/team-a/grant" },
      { record_id: "del_team_b", namespace: "team-b", uid: "Delegation/team-b/grant" },
    ]);
    expect(await readFile(join(dir, "team-b.yaml"), "utf8")).toContain("del_team_a"); // the file still says so
  });

  it("a resource declaring another namespace's delegation id is refused RECORD_NOT_OWNED and revokes nothing", async () => {
    await save("team-b-steal.yaml", grant("team-b", "steal", "del_team_a", { state: "revoked" }));
    await expect.poll(() => condition(get("team-b", "steal"), "Bound")?.reason, { timeout: 10_000, interval: 50 }).toBe("RECORD_NOT_OWNED");
    expect(condition(get("team-b", "steal"), "Bound")?.message).toMatch(/delegation del_team_a was created by another resource \(team-a\/grant\)/);
    expect(condition(get("team-b", "steal"), "Ready")?.status).toBe("False");
    expect(await revoked("del_team_a")).toBe(false);
    await unlink(join(dir, "team-b-steal.yaml"));
    await expect.poll(() => get("team-b", "steal"), { timeout: 10_000, interval: 50 }).toBeUndefined();
    expect(await revoked("del_team_a")).toBe(false);
  });

  it("deleting a resource whose annotation was repointed revokes its own grant, not the other namespace's", async () => {
    // A metadata-only update, as `kubectl annotate --overwrite` makes it.
    source?.store.patch(
      "delegations",
      "team-b",
      "grant",
      { metadata: { annotations: { "writ.dev/record-id": "del_team_a" } } },
      "application/merge-patch+json",
    );
    expect(get("team-b", "grant")?.metadata.annotations?.["writ.dev/record-id"]).toBe("del_team_a");
    await unlink(join(dir, "team-b.yaml"));
    await expect.poll(() => get("team-b", "grant"), { timeout: 10_000, interval: 50 }).toBeUndefined();
    expect(await revoked("del_team_b")).toBe(true);
    expect(await revoked("del_team_a")).toBe(false);
    expect(condition(get("team-a", "grant"), "Ready")?.status).toBe("True");
  });
});
