/**
 * Samples Ready as applied (issue 29, item 4), against a real Postgres and the controller's
 * reconcilers (the local manifests of `writ dev`):
 * - `writ samples --register` registers the sample agents with the API key's organization (the
 *   cluster path: no undocumented principal_id or verification_level to find), so the samples
 *   reconcile to Ready in a namespace bound to it, with no dev-only registration;
 * - a Delegation suspended by a time condition says why in its Ready message;
 * - `writ dev`'s samples deliver to its local webhook receiver, which checks the signature and
 *   logs the delivery to its file.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { samplesVerb } from "../../src/cli/verbs/samples.js";
import { localController } from "../../src/dev/local-controller.js";
import { startDevManifests } from "../../src/dev/dev-manifests.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../src/dev/webhook-receiver.js";
import { startLocalManifests, type LocalManifests } from "../../src/sources/local/index.js";
import { alertSubscribers, newEventId } from "../../src/store/subscriptions.js";
import { runVerb } from "../unit/cli/capture.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

type Status = { phase?: string; effectiveStatus?: string; conditions?: { type: string; status: string; reason: string; message: string }[] };
const PLURALS: Record<string, string> = { Delegation: "delegations", IntentAgreement: "intentagreements", Subscription: "subscriptions" };

let w: RegistryWorld;
/** A second data plane on its own database: the cluster path, where no agent is registered yet. */
let cluster: RegistryWorld;
let root: string;
const sources: LocalManifests[] = [];
const receivers: WebhookReceiver[] = [];
const lines: string[] = [];

beforeAll(async () => {
  w = await startRegistryWorld({
    BUR_ALLOW_DEMO_SEED: "1",
    BUR_WEBHOOK_WORKER: "1",
    BUR_WEBHOOK_POLL_MS: "100",
    BUR_WEBHOOK_BACKOFF_MIN_MS: "50",
    BUR_WEBHOOK_BACKOFF_MAX_MS: "200",
    WRIT_OUTBOUND_ALLOW_LOOPBACK: "1",
  });
  expect((await w.call("POST", "/v1/admin/seed-demo", w.admin)).status).toBe(200);
  cluster = await startRegistryWorld();
  root = await mkdtemp(join(tmpdir(), "writ-samples-ready-"));
});
afterAll(async () => {
  for (const s of sources) await s.stop();
  for (const r of receivers) await r.close();
  await w?.close();
  await cluster?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function manifestsIn(_dir: string, files: readonly string[]): Promise<{ kind: string; name: string; spec: Record<string, unknown> }[]> {
  const out = [];
  for (const f of files) {
    const m = parse(await readFile(f, "utf8")) as { kind: string; metadata: { name: string }; spec: Record<string, unknown> };
    out.push({ kind: m.kind, name: m.metadata.name, spec: m.spec });
  }
  return out;
}

const statusOf = (source: LocalManifests, kind: string, name: string) => source.store.get(PLURALS[kind] ?? "", "default", name)?.status as Status | undefined;
const readyOf = (source: LocalManifests, kind: string, name: string) => statusOf(source, kind, name)?.conditions?.find((c) => c.type === "Ready");

describe("samples Ready as applied", () => {
  it("writ samples --register registers the sample agents with the key's organization; applied in a namespace bound to it, all are Ready and Active", async () => {
    const orgId = await cluster.createOrg("agent_operator", "Samples Corp");
    const { token } = await cluster.issueKey(orgId);
    const out = join(root, "cluster");
    const r = await runVerb(samplesVerb, ["--out", out, "--register", "--server", cluster.server.url], { env: { WRIT_API_KEY: token }, now: () => new Date() });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`registered: agent_procurement with organization ${orgId}`);
    expect(r.out).toContain(`registered: agent_travel with organization ${orgId}`);
    expect(r.out).toContain(`kubectl label namespace default writ.dev/org-id=${orgId} --overwrite`);
    // Again: already registered is fine.
    const again = await runVerb(samplesVerb, ["--out", out, "--register", "--server", cluster.server.url], {
      env: { WRIT_API_KEY: token },
      now: () => new Date(),
    });
    expect(again.code).toBe(0);
    expect(again.out).toContain("already registered: agent_procurement");
    const agents = await cluster.db.pool.query<{ agent_id: string; org_id: string; principal_id: string }>(
      "SELECT agent_id, org_id, principal_id FROM agents WHERE agent_id IN ('agent_procurement', 'agent_travel') ORDER BY agent_id",
    );
    expect(agents.rows).toEqual([
      { agent_id: "agent_procurement", org_id: orgId, principal_id: "prn_acme" },
      { agent_id: "agent_travel", org_id: orgId, principal_id: "prn_acme" },
    ]);

    // The namespace bound to the organization (kubectl label), and NO dev-only registration.
    const source = await startLocalManifests({
      dir: out,
      orgId,
      startReconcilers: localController({ databaseUrl: cluster.db.url, logSigner: cluster.server.app.logSigner ?? undefined, print: (l) => lines.push(l) }),
      stateFile: join(root, "cluster-state.json"),
      print: (l) => lines.push(l),
    });
    sources.push(source);
    const resources = await manifestsIn(
      out,
      (await readdir(out)).filter((f) => f.endsWith(".yaml")).map((f) => join(out, f)),
    );
    expect(resources).toHaveLength(4);
    await expect
      .poll(
        () =>
          resources.map((m) => `${m.kind}/${m.name}: ${readyOf(source, m.kind, m.name)?.status ?? "none"} ${readyOf(source, m.kind, m.name)?.reason ?? ""}`),
        { timeout: 30_000, interval: 100 },
      )
      .toEqual(resources.map((m) => `${m.kind}/${m.name}: True Reconciled`));
    for (const m of resources.filter((x) => x.kind === "Delegation")) expect(statusOf(source, m.kind, m.name)?.phase).toBe("Active");
  });

  it("a Delegation suspended by a time condition says why in its Ready message", async () => {
    const dir = join(root, "suspended");
    const r = await runVerb(samplesVerb, ["--out", dir], { now: () => new Date() });
    expect(r.code).toBe(0);
    const file = join(dir, "writ.dev_v1alpha1_delegation.yaml");
    const text = await readFile(file, "utf8");
    // A window that excludes now: from two to three hours ahead (UTC). Conditions are not
    // signed in a grant (only an agreement's mandates are), so the sample can carry it.
    const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    const start = hhmm(Date.now() + 2 * 3600_000);
    const end = hhmm(Date.now() + 3 * 3600_000);
    await writeFile(
      file,
      text.replace(
        / {2}conditions:\n {4}- type: max_risk_score\n {6}value: 70\n/,
        `  conditions:\n    - type: time_window\n      start: "${start}"\n      end: "${end}"\n      timezone: UTC\n`,
      ),
    );
    expect(await readFile(file, "utf8")).toContain("type: time_window");
    const name = (parse(text) as { metadata: { name: string } }).metadata.name;
    const source = await startDevManifests(w.server.app, {
      databaseUrl: w.db.url,
      root: join(root, ".writ-suspended"),
      cwd: root,
      env: { WRIT_MANIFESTS_DIR: dir },
      print: (l) => lines.push(l),
    });
    if (!source) throw new Error(lines.join("\n"));
    sources.push(source);
    await expect.poll(() => statusOf(source, "Delegation", name)?.phase, { timeout: 30_000, interval: 100 }).toBe("Suspended");
    const ready = readyOf(source, "Delegation", name);
    expect(ready?.message).toMatch(
      new RegExp(
        `effective status suspended \\(suspended: \\d\\d:\\d\\d in UTC is outside ${start}-${end} \\(OUTSIDE_TIME_WINDOW\\); verify answers DENY until \\S+Z at least\\)`,
      ),
    );
  });

  it("writ dev's samples deliver to its local webhook receiver, which checks the signature and logs the delivery", async () => {
    const logFile = join(root, "webhooks.log");
    const signer = w.server.app.logSigner;
    if (!signer) throw new Error("no log signer");
    const receiver = await startWebhookReceiver({ logFile, publicJwk: { ...signer.publicJwk }, print: (l) => lines.push(l), port: 0 });
    receivers.push(receiver);
    expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/writ\/alerts$/);
    const workspace = join(root, ".writ-dev");
    const source = await startDevManifests(w.server.app, {
      databaseUrl: w.db.url,
      root: workspace,
      cwd: root,
      env: {},
      webhookUrl: receiver.url,
      print: (l) => lines.push(l),
    });
    if (!source) throw new Error(lines.join("\n"));
    sources.push(source);
    const subFile = join(workspace, "samples", "writ.dev_v1alpha1_subscription.yaml");
    const sub = parse(await readFile(subFile, "utf8")) as { metadata: { name: string }; spec: { agentId: string; webhookUrl: string } };
    expect(sub.spec.webhookUrl).toBe(receiver.url);
    await expect.poll(() => readyOf(source, "Subscription", sub.metadata.name)?.status, { timeout: 30_000, interval: 100 }).toBe("True");
    const stored = await w.db.pool.query<{ webhook_url: string }>("SELECT webhook_url FROM subscriptions WHERE agent_id = $1 AND active", [sub.spec.agentId]);
    expect(stored.rows.map((x) => x.webhook_url)).toContain(receiver.url);

    const eventId = newEventId();
    await alertSubscribers(w.db.pool, sub.spec.agentId, {
      event_id: eventId,
      type: "incident",
      agent_id: sub.spec.agentId,
      at: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      details: { note: "sample" },
    });
    await expect.poll(() => readFile(logFile, "utf8").catch(() => ""), { timeout: 30_000, interval: 100 }).toContain(eventId);
    const entry = (await readFile(logFile, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event_id: string; type: string; agent_id: string; signature: string })
      .find((e) => e.event_id === eventId);
    expect(entry).toMatchObject({ type: "incident", agent_id: sub.spec.agentId, signature: "verified" });
    expect(lines.join("\n")).toContain(`webhook received: incident about ${sub.spec.agentId} (event ${eventId}), signature verified`);

    // A forged body is logged as not verified, and still acknowledged (the receiver is a dev tool).
    const forged = await fetch(receiver.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ event_id: "evt_forged", type: "revocation", agent_id: "x", signature: { protected: "e30", payload: "e30", signature: "AA" } }),
    });
    expect(forged.status).toBe(204);
    await expect
      .poll(() => readFile(logFile, "utf8"), { timeout: 5000, interval: 50 })
      .toMatch(/"event_id":"evt_forged".*"signature":"NOT verified: alert signature does not verify/);
    expect((await fetch(receiver.url, { method: "POST", body: "not json" })).status).toBe(400);
    expect((await fetch(receiver.url)).status).toBe(405);

    // A later run whose receiver got another port: the workspace's sample Subscription follows it.
    await source.stop();
    sources.splice(sources.indexOf(source), 1);
    const moved = "http://127.0.0.1:1/writ/alerts";
    const again = await startDevManifests(w.server.app, {
      databaseUrl: w.db.url,
      root: workspace,
      cwd: root,
      env: {},
      webhookUrl: moved,
      print: (l) => lines.push(l),
    });
    if (!again) throw new Error(lines.join("\n"));
    sources.push(again);
    expect((parse(await readFile(subFile, "utf8")) as typeof sub).spec.webhookUrl).toBe(moved);
    expect(lines.join("\n")).toContain(`writ.dev_v1alpha1_subscription.yaml: webhookUrl ${receiver.url} -> ${moved} (this run's webhook receiver)`);
  });
});
