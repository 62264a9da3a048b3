/**
 * `writ dev`'s local manifests (src/sources/local): the folder `WRIT_MANIFESTS_DIR` (`off` turns
 * it off) is applied and watched, and the controller's reconcilers store it in the dev database.
 * Unset, it is the workspace's `.writ/samples/`: fresh samples (./samples.ts, as `writ samples`
 * writes them) rendered there once, when the folder does not exist yet, so that they are Ready
 * while their grants last (delete the folder to render new ones); their Subscription delivers to
 * `writ dev`'s webhook receiver (./webhook-receiver.ts; its URL is followed when its port changes).
 *
 * Binding: every namespace of the manifests (`default` when a manifest names none) is bound to
 * the seeded PUBLIC demo operator organization (the organization of `agent_demo`), so the demo
 * operator key answers verify for them; the agents their Delegations name are registered to it
 * (./manifest-agents.ts). Without the demo data (BUR_ALLOW_DEMO_SEED not 1) nothing is bound and
 * the resources are refused NAMESPACE_NOT_BOUND. The resources persist in
 * `.writ/local-resources.json`. A Delegation whose `expires_at` has passed is reported at once
 * (signed samples are dated and lapse): signed files are never re-dated here.
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import { logAppendOptions } from "../api/routes/shared/registry-log.js";
import { DEMO_AGENT_ID } from "../core/demo/index.js";
import { startLocalManifests, type LocalManifests, type ManifestObject } from "../sources/local/index.js";
import { getAgent } from "../store/index.js";
import { localController } from "./local-controller.js";
import { registerManifestAgents } from "./manifest-agents.js";
import { writeFreshSamples } from "./samples.js";

/** The sample Subscription's file in a rendered samples folder. */
const SUBSCRIPTION_FILE = "writ.dev_v1alpha1_subscription.yaml";

/** The default manifests folder, inside the workspace folder (`.writ/`). */
export const DEFAULT_MANIFESTS_DIR = "samples";

/** The manifests folder of `env` (relative to `cwd`; default `<root>/samples`), or null when WRIT_MANIFESTS_DIR is `off`. */
export function manifestsDirOf(env: NodeJS.ProcessEnv, cwd: string, root: string): { dir: string; explicit: boolean } | null {
  const raw = env.WRIT_MANIFESTS_DIR?.trim();
  if (raw?.toLowerCase() === "off") return null;
  return raw ? { dir: resolve(cwd, raw), explicit: true } : { dir: resolve(root, DEFAULT_MANIFESTS_DIR), explicit: false };
}

/**
 * The workspace's sample Subscription delivers to this run's receiver: when the receiver got
 * another port than the one the samples were rendered with, the (unsigned) Subscription file's
 * loopback `webhookUrl` is rewritten. A line saying so, or undefined.
 */
async function followReceiver(dir: string, url: string): Promise<string | undefined> {
  const file = join(dir, SUBSCRIPTION_FILE);
  const text = await readFile(file, "utf8").catch(() => undefined);
  const m = text === undefined ? null : /^(\s*webhookUrl:\s*)(http:\/\/127\.0\.0\.1:\d+\/\S*)\s*$/m.exec(text);
  if (text === undefined || !m || m[2] === url) return undefined;
  await writeFile(file, text.replace(m[0], `${m[1]}${url}`));
  return `${SUBSCRIPTION_FILE}: webhookUrl ${m[2]} -> ${url} (this run's webhook receiver)`;
}

/** Lines about Delegations of `objects` that have expired by `now` (each reported once per expiry). */
function expiryNotes(objects: readonly ManifestObject[], now: number, reported: Set<string>): string[] {
  const out: string[] = [];
  for (const o of objects) {
    if (o.object.kind !== "Delegation") continue;
    const expires = (o.object.spec as { expires_at?: unknown }).expires_at;
    const at = typeof expires === "string" ? Date.parse(expires) : Number.NaN;
    const key = `${o.object.metadata.namespace}/${o.object.metadata.name}@${String(expires)}`;
    if (!(at <= now) || reported.has(key)) continue;
    reported.add(key);
    out.push(
      `Delegation ${o.object.metadata.namespace}/${o.object.metadata.name} (${o.file}) expired at ${String(expires)}: verify answers DENY (DELEGATION_EXPIRED). ` +
        "For fresh samples: writ samples --out <folder>, then WRIT_MANIFESTS_DIR=<folder> (or delete .writ/samples and restart writ dev)",
    );
  }
  return out;
}

/** Starts the local manifests of `writ dev` (or explains why not); `print` gets each line. */
export async function startDevManifests(
  app: FastifyInstance,
  opts: {
    databaseUrl: string;
    root: string;
    cwd: string;
    env: NodeJS.ProcessEnv;
    print(line: string): void;
    /** The URL of `writ dev`'s webhook receiver, which the sample Subscription delivers to. */
    webhookUrl?: string;
  },
): Promise<LocalManifests | undefined> {
  const { print } = opts;
  const where = manifestsDirOf(opts.env, opts.cwd, opts.root);
  if (!where) return undefined;
  const exists = await stat(where.dir).then(
    () => true,
    () => false,
  );
  if (!where.explicit && !exists) {
    // Once per workspace: fresh samples, signed now (PUBLIC sample keys).
    const at = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    await writeFreshSamples(where.dir, at, opts.webhookUrl);
    print(`manifests: rendered fresh samples dated ${at} into ${where.dir} (as writ samples does; delete the folder to render new ones)`);
  } else if (!where.explicit && opts.webhookUrl !== undefined) {
    const line = await followReceiver(where.dir, opts.webhookUrl);
    if (line) print(`manifests: ${line}`);
  }
  const isDir = await stat(where.dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) {
    print(`manifests: WRIT_MANIFESTS_DIR ${where.dir} is not a folder; local manifests are off`);
    return undefined;
  }
  const pool = app.pool;
  const orgId = pool ? (await getAgent(pool, DEMO_AGENT_ID))?.org_id : undefined;
  if (!orgId) print("manifests: no demo organization (BUR_ALLOW_DEMO_SEED is not 1): namespaces are not bound, resources are refused NAMESPACE_NOT_BOUND");
  const reported = new Set<string>();
  const signer = app.logSigner ?? undefined;
  print(`manifests: applying and watching ${where.dir}${orgId ? `; every namespace is bound to the demo operator ${orgId}` : ""}`);
  return startLocalManifests({
    dir: where.dir,
    orgId,
    startReconcilers: localController({ databaseUrl: opts.databaseUrl, logSigner: signer, logOrigin: app.settings.logOrigin, print }),
    stateFile: resolve(opts.root, "local-resources.json"),
    print,
    beforeApply: async (objects) => {
      const now = new Date();
      for (const line of expiryNotes(objects, now.getTime(), reported)) print(`manifests: ${line}`);
      if (!pool || !orgId || !signer) return;
      for (const line of await registerManifestAgents(pool, objects, { orgId, signer, logOptions: logAppendOptions(app, now), now }))
        print(`manifests: ${line}`);
    },
  });
}
