/**
 * Samples are Ready whenever they are applied: `writ dev` with WRIT_MANIFESTS_DIR unset renders
 * fresh samples once per workspace into `.writ/samples/` and applies that folder; `writ samples
 * --out` renders another set later (ids and names carrying its own time), which applies beside
 * the first without colliding. Every resource of both becomes Ready=True, through the
 * controller's reconcilers against a real Postgres (the local manifests of `writ dev`).
 */
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { samplesVerb } from "../../src/cli/verbs/samples.js";
import { renderSamples } from "../../src/manifests/samples.js";
import { startDevManifests } from "../../src/dev/dev-manifests.js";
import type { LocalManifests } from "../../src/sources/local/index.js";
import { runVerb } from "../unit/cli/capture.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

type Status = { conditions?: { type: string; status: string; reason: string }[] };
const PLURALS: Record<string, string> = { Delegation: "delegations", IntentAgreement: "intentagreements", Subscription: "subscriptions" };

let w: RegistryWorld;
let root: string;
const sources: LocalManifests[] = [];
const lines: string[] = [];

beforeAll(async () => {
  w = await startRegistryWorld({ BUR_ALLOW_DEMO_SEED: "1" });
  expect((await w.call("POST", "/v1/admin/seed-demo", w.admin)).status).toBe(200);
  root = await mkdtemp(join(tmpdir(), "writ-fresh-samples-"));
});
afterAll(async () => {
  for (const s of sources) await s.stop();
  await w?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** The kind and name of every manifest in `dir`. */
async function manifestsIn(dir: string): Promise<{ kind: string; name: string }[]> {
  const out = [];
  for (const f of (await readdir(dir)).filter((n) => n.endsWith(".yaml")).sort()) {
    const m = parse(await readFile(join(dir, f), "utf8")) as { kind: string; metadata: { name: string } };
    out.push({ kind: m.kind, name: m.metadata.name });
  }
  return out;
}

/** Applies `dir` as `writ dev` does (or its default folder when `dir` is undefined). */
async function apply(dir: string | undefined): Promise<LocalManifests> {
  const source = await startDevManifests(w.server.app, {
    databaseUrl: w.db.url,
    root: join(root, ".writ"),
    cwd: root,
    env: dir === undefined ? {} : { WRIT_MANIFESTS_DIR: dir },
    print: (l) => lines.push(l),
  });
  if (!source) throw new Error(`local manifests did not start: ${lines.join("\n")}`);
  sources.push(source);
  return source;
}

async function expectAllReady(source: LocalManifests, dir: string): Promise<void> {
  const resources = await manifestsIn(dir);
  expect(resources.map((r) => r.kind).sort()).toEqual(["Delegation", "Delegation", "IntentAgreement", "Subscription"]);
  const readiness = () =>
    resources.map((r) => {
      const status = source.store.get(PLURALS[r.kind] ?? "", "default", r.name)?.status as Status | undefined;
      const c = status?.conditions?.find((x) => x.type === "Ready");
      return `${r.kind}/${r.name}: ${c ? `${c.status} ${c.reason}` : "none"}`;
    });
  await expect.poll(readiness, { timeout: 30_000, interval: 100 }).toEqual(resources.map((r) => `${r.kind}/${r.name}: True Reconciled`));
}

describe("fresh samples", () => {
  it("writ dev renders them once into .writ/samples/ and every one becomes Ready", async () => {
    const source = await apply(undefined);
    const dir = join(root, ".writ", "samples");
    expect(lines.join("\n")).toMatch(/rendered fresh samples dated \S+ into .*\.writ\/samples/);
    const names = (await manifestsIn(dir)).map((m) => m.name);
    for (const n of names) expect(n).toMatch(/-\d{8}t\d{6}z$/);
    await expectAllReady(source, dir);
    // Once per workspace: a second start applies the same files.
    const before = await stat(join(dir, "writ.dev_v1alpha1_delegation.yaml"));
    await source.stop();
    sources.splice(sources.indexOf(source), 1);
    lines.length = 0;
    const again = await apply(undefined);
    expect(lines.join("\n")).not.toContain("rendered fresh samples");
    expect((await stat(join(dir, "writ.dev_v1alpha1_delegation.yaml"))).mtimeMs).toBe(before.mtimeMs);
    await expectAllReady(again, dir);
    await again.stop();
    sources.splice(sources.indexOf(again), 1);
  });

  it("writ samples --out renders a later set that applies beside the first without colliding, all Ready", async () => {
    const out = join(root, "later");
    const at = new Date(Date.now() + 60_000).toISOString().replace(/\.\d+Z$/, "Z");
    const r = await runVerb(samplesVerb, ["--out", out, "--at", at]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`wrote 4 samples dated ${at}`);
    expect(r.out).toContain("agent_procurement  public_key");
    for (const f of await renderSamples(at, { dated: true })) expect(await readFile(join(out, f.name), "utf8")).toBe(f.content);
    const source = await apply(out);
    await expectAllReady(source, out);
    const stored = await w.db.pool.query<{ delegation_id: string }>(
      "SELECT delegation_id FROM delegations WHERE delegation_id LIKE 'del_acme_%' ORDER BY delegation_id",
    );
    expect(stored.rows).toHaveLength(4);
  });
});
