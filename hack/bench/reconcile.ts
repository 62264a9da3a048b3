/**
 * `npm run bench:reconcile`: the controller reconciling 5,000 Delegations, everything on
 * 127.0.0.1 (a real kube-apiserver 1.20 + etcd from envtest, an embedded Postgres).
 *
 * 1. Baseline, in the same run: the time to create 5,000 Delegation objects with NO controller
 *    running (namespace `bench-baseline`), by POSTs from this process, BENCH_CONCURRENCY (16) at
 *    a time.
 * 2. `writ controller` as a child process (leader election on, its default workers per kind (16;
 *    BENCH_WORKERS), watching only
 *    namespace `bench`, bound to a registered organization), serving its admission webhooks,
 *    registered as the chart registers them (failurePolicy Fail, a test CA; BENCH_WEBHOOK=0: none,
 *    the controller then adds its finalizer with a patch). Once it leads with synced caches,
 *    the same 5,000 objects (other ids) are created in `bench` the same way; a watch (the
 *    supervised informer) counts `Ready=True`. Reported: time to create, time until all are
 *    Ready (from the first create), the controller's peak resident memory (VmHWM of
 *    /proc/<pid>/status, and VmRSS sampled every 250 ms), and its reconcile metrics.
 * 3. Checks: 5,000 rows in Postgres bound to the organization, no reconcile errors.
 *
 * Also, before the controller starts (BENCH_FLOOR=0: skipped): the floor of any controller that
 * reports in `.status`, the same creates in `bench-floor`, each followed by ONE status write from
 * this process shaped as the controller's (five conditions, phase, expiry), with no controller
 * and no webhooks. A ratio below the floor's would need fewer API server writes than one per
 * resource.
 *
 * BENCH_CONTROLLER_FROM runs another checkout's controller under this harness (see below);
 * BENCH_RUN_FROM=dist the compiled build; BENCH_CONTROLLER_NODE_ARGS adds node flags to the
 * controller (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 *
 * Every child is stopped by its pid; the API server, etcd and Postgres are stopped and their
 * folders removed at the end.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { keyId, signerFromSeed } from "../../src/core/jose/index.js";
import { freePort } from "../../src/dev/free-port.js";
import { newPassword, startPostgres, type RunningPostgres } from "../../src/dev/postgres.js";
import { JSON_PATCH, KubeClient, loadKubeConfig } from "../../src/sources/kubernetes/client.js";
import { startInformer } from "../../src/sources/kubernetes/informer.js";
import type { KubeObject } from "../../src/sources/kubernetes/objects.js";
import { insertAgent } from "../../src/store/agents.js";
import { migrate } from "../../src/store/migrate.js";
import { createOrg } from "../../src/store/orgs.js";
import { createPool } from "../../src/store/pool.js";
import { ensureEnvtest, startEnvtest, type Envtest } from "../../test/helpers/envtest.js";
import { cpuSeconds, postmasterPid, treeCpuSeconds } from "./proc-cpu.js";
import { DEFAULT_WORKERS } from "../../src/controller/settings.js";
import { makeWebhookCerts, webhookConfigurations } from "../../test/helpers/webhook-certs.js";

const COUNT = Number(process.env.BENCH_DELEGATIONS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
/** Workers per kind: the controller's default unless BENCH_WORKERS says otherwise. */
const WORKERS = process.env.BENCH_WORKERS ?? String(DEFAULT_WORKERS);
const WEBHOOK = process.env.BENCH_WEBHOOK !== "0";
const FLOOR = process.env.BENCH_FLOOR !== "0";
const READY_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_S ?? 900) * 1000;
/**
 * BENCH_CONTROLLER_FROM=<checkout>: run the `writ controller` of another checkout (its own
 * node_modules; e.g. a worktree of main, for a before/after measured by this same harness). Name
 * its workers with BENCH_WORKERS, and BENCH_WEBHOOK=0 when it serves no admission webhooks.
 */
const REPO = process.env.BENCH_CONTROLLER_FROM ? resolve(process.env.BENCH_CONTROLLER_FROM) : fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(REPO, "bin", "writ.mjs");
const CRDS = fileURLToPath(new URL("../../crds/", import.meta.url));
const AGENT = "agent_bench";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
const seconds = (ms: number) => `${fmt(ms / 1000, 1)} s`;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** One Delegation: a direct grant without time conditions (so nothing changes with the clock). */
function delegation(i: number, prefix: string, now: number): Record<string, unknown> {
  const n = String(i).padStart(5, "0");
  return {
    apiVersion: "writ.dev/v1alpha1",
    kind: "Delegation",
    metadata: { name: `${prefix}-${n}` },
    spec: {
      delegation_id: `del_${prefix}_${n}`,
      principal: { type: "business", id: "org_bench" },
      agent: { agent_id: AGENT },
      granted_at: iso(now - 3600_000),
      expires_at: iso(now + 6 * 24 * 3600_000),
      purpose: `Bench grant ${n}`,
      scope: { currency: "EUR", maximum_amount: 100 + (i % 50), cumulative_maximum: 1000, action_types: ["purchase"], categories: ["office_supplies"] },
      conditions: [{ type: "max_risk_score", value: 70 }],
    },
  };
}

/** A status shaped as the controller writes for a bench Delegation (what the floor writes). */
function readyStatus(i: number, prefix: string, orgId: string, now: number): Record<string, unknown> {
  const id = `del_${prefix}_${String(i).padStart(5, "0")}`;
  const at = iso(now);
  const c = (type: string, reason: string, message: string) => ({ type, status: "True", reason, message, lastTransitionTime: at, observedGeneration: 1 });
  return {
    phase: "Active",
    effectiveStatus: "active",
    expiresAt: iso(now + 6 * 24 * 3600_000),
    chainDepth: 0,
    observedGeneration: 1,
    conditions: [
      c("Valid", "Validated", "the spec validates; its times, scope and conditions are well-formed"),
      c("ChainValid", "ChainIntact", "a direct grant from the principal"),
      c("Bound", "Bound", `namespace bench is bound to ${orgId}`),
      c("Stored", "Stored", `stored as delegation ${id} (generation 1)`),
      c("Ready", "Reconciled", `stored as delegation ${id}; effective status active`),
    ],
  };
}

/**
 * Creates `COUNT` objects in `namespace`, CONCURRENCY at a time (each followed by `after`, when
 * given); resolves with the elapsed ms.
 */
async function createAll(
  client: KubeClient,
  namespace: string,
  prefix: string,
  after?: (i: number, name: string, now: number) => Promise<unknown>,
): Promise<number> {
  const path = `/apis/writ.dev/v1alpha1/namespaces/${namespace}/delegations`;
  const now = Date.now();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < COUNT; i = next++) {
        const d = delegation(i, prefix, now);
        await client.create(path, d);
        if (after) await after(i, (d.metadata as { name: string }).name, now);
      }
    }),
  );
  return performance.now() - started;
}

function memory(pid: number): { hwmKb: number; rssKb: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? 0);
    return { hwmKb: kb("VmHWM"), rssKb: kb("VmRSS") };
  } catch {
    return undefined;
  }
}

async function metric(url: string, pattern: RegExp): Promise<number[]> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return [...text.matchAll(new RegExp(pattern.source, "gm"))].map((m) => Number(m[1]));
}

async function startController(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const port = await freePort();
  // BENCH_CONTROLLER_NODE_ARGS: node flags for the controller (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof).
  const nodeArgs = (process.env.BENCH_CONTROLLER_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
  const child = spawn(process.execPath, [...nodeArgs, BIN, "controller"], {
    cwd: REPO,
    env: { ...env, HOST: "127.0.0.1", PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (b: Buffer) => (out = (out + b.toString("utf8")).slice(-100_000)));
  child.stderr?.on("data", (b: Buffer) => (out = (out + b.toString("utf8")).slice(-100_000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`writ controller exited:\n${out}`);
    const leading = await metric(url, /^leader_election_master_status\{name="bench-controller"\} (\d)/).catch(() => []);
    if (leading[0] === 1 && (await fetch(`${url}/readyz`).catch(() => undefined))?.ok) break;
    if (Date.now() > deadline) throw new Error(`writ controller not leading in time:\n${out}`);
    await sleep(200);
  }
  return { child, url, output: () => out };
}

/** SIGTERM, then SIGKILL after 15 s; resolves with how it ended and how long it took. */
function stopChild(child: ChildProcess): Promise<string> {
  if (child.exitCode !== null || child.pid === undefined) return Promise.resolve("already exited");
  const started = performance.now();
  return new Promise((resolve) => {
    const t = setTimeout(() => child.pid !== undefined && process.kill(child.pid, "SIGKILL"), 15_000);
    child.once("exit", (code, signal) => {
      clearTimeout(t);
      resolve(`${signal ? `killed by ${signal}` : `exit ${code}`} ${seconds(performance.now() - started)} after SIGTERM`);
    });
    process.kill(child.pid as number, "SIGTERM");
  });
}

async function main(): Promise<void> {
  const loadAtStart = loadavg()[0] ?? 0;
  const dataDir = await mkdtemp(join(tmpdir(), "writ-bench-reconcile-"));
  const certsDir = await mkdtemp(join(tmpdir(), "writ-bench-webhook-"));
  let pg: RunningPostgres | undefined;
  let env: Envtest | undefined;
  let controller: ChildProcess | undefined;
  try {
    env = await startEnvtest({ binDir: await ensureEnvtest() });
    pg = await startPostgres({ dataDir, port: await freePort(), password: newPassword(), serverSettings: { max_connections: "100" } });
    const dbUrl = pg.url("postgres");
    await migrate(dbUrl);
    const pool = createPool(dbUrl, { max: 2 });
    const org = await createOrg(pool, { name: "Bench Corp", org_type: "agent_operator" }, new Date());
    const jwk = signerFromSeed(randomBytes(32).toString("hex")).publicJwk;
    await insertAgent(
      pool,
      { agent_id: AGENT, org_id: org.org_id, principal_id: "prn_bench", verification_level: "operator_verified", public_key: jwk, fingerprint: keyId(jwk) },
      new Date(),
    );

    const kubectl = async (args: string[]) => {
      const r = await (env as Envtest).kubectl(args);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.stderr}`);
    };
    await kubectl(["apply", "-f", CRDS]);
    await kubectl(["wait", "--for=condition=Established", "--timeout=60s", "crd/delegations.writ.dev"]);
    await kubectl(["create", "namespace", "bench-baseline"]);
    await kubectl(["create", "namespace", "bench-floor"]);
    await kubectl(["create", "namespace", "bench"]);
    await kubectl(["label", "namespace", "bench", `writ.dev/org-id=${org.org_id}`]);
    const client = new KubeClient(loadKubeConfig(env.kubeconfigPath), { maxSockets: CONCURRENCY });
    console.log(`writ controller from ${REPO}`);
    console.log(`envtest kube-apiserver 1.20 at ${env.server}; Postgres on 127.0.0.1:${pg.port}; ${cpus().length} cores, load ${fmt(loadAtStart, 2)}`);

    // 1. Baseline: the same creates, no controller.
    const basePids = env.pids();
    const baseCpu = () => ({ apiServer: cpuSeconds(basePids.apiServer) ?? 0, etcd: cpuSeconds(basePids.etcd) ?? 0 });
    const baseBefore = baseCpu();
    const baselineMs = await createAll(client, "bench-baseline", "base");
    const baseAfter = baseCpu();
    console.log(
      `baseline: created ${fmt(COUNT)} Delegations with no controller in ${seconds(baselineMs)} (CPU: kube-apiserver ${fmt(baseAfter.apiServer - baseBefore.apiServer, 1)} s, etcd ${fmt(baseAfter.etcd - baseBefore.etcd, 1)} s)`,
    );

    // The floor: one status write per resource, from this process.
    const floorBefore = baseCpu();
    const floorMs = FLOOR
      ? await createAll(client, "bench-floor", "floor", (i, name, now) =>
          client.request("PATCH", `/apis/writ.dev/v1alpha1/namespaces/bench-floor/delegations/${name}/status`, {
            body: [{ op: "add", path: "/status", value: readyStatus(i, "floor", org.org_id, now) }],
            contentType: JSON_PATCH,
          }),
        )
      : undefined;
    const floorAfter = baseCpu();
    if (floorMs !== undefined)
      console.log(
        `floor: created ${fmt(COUNT)} Delegations, each with one status write, no controller, in ${seconds(floorMs)} (CPU: kube-apiserver ${fmt(floorAfter.apiServer - floorBefore.apiServer, 1)} s, etcd ${fmt(floorAfter.etcd - floorBefore.etcd, 1)} s)`,
      );

    // 2. The controller (and its webhooks, as the chart installs them).
    const webhookPort = await freePort();
    const certs = WEBHOOK ? await makeWebhookCerts(certsDir) : undefined;
    const started = await startController({
      ...(certs ? { WRIT_WEBHOOK_PORT: String(webhookPort), WRIT_WEBHOOK_CERT_DIR: certs.certDir } : {}),
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      KUBECONFIG: env.kubeconfigPath,
      DATABASE_URL: dbUrl,
      SVC_LOG_SIGNING_SEED: randomBytes(32).toString("hex"),
      WRIT_WATCH_NAMESPACES: "bench",
      WRIT_LEADER_ELECTION_LEASE: "bench-controller",
      WRIT_LEADER_ELECTION_NAMESPACE: "default",
      WRIT_CONTROLLER_WORKERS: WORKERS,
      LOG_LEVEL: "warn",
      // BENCH_RUN_FROM=dist: the compiled build, as the image runs it (after npm run build).
      ...(process.env.BENCH_RUN_FROM ? { WRIT_RUN_FROM: process.env.BENCH_RUN_FROM } : {}),
    });
    controller = started.child;
    const pid = controller.pid as number;
    if (certs) {
      const configs = webhookConfigurations(`https://127.0.0.1:${webhookPort}`, certs.caBundle);
      for (const c of configs)
        await client.create(
          `/apis/admissionregistration.k8s.io/v1/${c.kind === "MutatingWebhookConfiguration" ? "mutatingwebhookconfigurations" : "validatingwebhookconfigurations"}`,
          c,
        );
      // The API server reads webhook configurations through an informer: wait until it calls ours.
      for (let i = 0; ; i++) {
        const probe = delegation(0, "probe", Date.now());
        (probe.spec as { expires_at: string }).expires_at = "2000-01-01T00:00:00Z";
        const refused = await client.request("POST", "/apis/writ.dev/v1alpha1/namespaces/bench/delegations", { body: probe, query: { dryRun: "All" } }).then(
          () => false,
          () => true,
        );
        if (refused) break;
        if (i > 100) throw new Error("the admission webhook is not called");
        await sleep(100);
      }
    }
    const idle = memory(pid);
    let peakRss = idle?.rssKb ?? 0;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, memory(pid)?.rssKb ?? 0)), 250);

    const readyAt = new Map<string, number>();
    let allReady: () => void = () => {};
    const done = new Promise<void>((resolve) => (allReady = resolve));
    const watch = startInformer<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>({
      client,
      group: "writ.dev",
      version: "v1alpha1",
      plural: "delegations",
      namespace: "bench",
      resyncMs: 0,
      onEvent: (type, obj) => {
        if (type === "deleted") return;
        if (obj.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") && !readyAt.has(obj.metadata.name)) {
          readyAt.set(obj.metadata.name, performance.now());
          if (readyAt.size === COUNT) allReady();
        }
      },
    });
    await watch.synced;

    const pids = env.pids();
    const pgPid = postmasterPid(dataDir);
    const cpuNow = async () => ({
      apiServer: cpuSeconds(pids.apiServer),
      etcd: cpuSeconds(pids.etcd),
      postgres: await treeCpuSeconds(pgPid, 500),
      controller: cpuSeconds(pid),
      bench: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    });
    const cpuBefore = await cpuNow();
    const t0 = performance.now();
    const createMs = await createAll(client, "bench", "bench");
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("timeout"), READY_TIMEOUT_MS)));
    const outcome = await Promise.race([done.then(() => "ready"), timeout]);
    clearTimeout(timer);
    const readyMs = performance.now() - t0;
    clearInterval(sampler);
    const mem = memory(pid);
    const cpuAfter = await cpuNow();
    await watch.stop();
    client.close();

    const reconciles = await metric(started.url, /^controller_runtime_reconcile_total\{controller="delegation",result="[a-z_]+"\} (\d+)/);
    const errors = await metric(started.url, /^controller_runtime_reconcile_errors_total\{controller="delegation"\} (\d+)/);
    const rows = await pool.query<{ n: string }>("SELECT count(*)::text AS n FROM delegations WHERE org_id = $1", [org.org_id]);
    await pool.end();

    console.log("");
    console.log(`load average (1 min): ${fmt(loadAtStart, 2)} before, ${fmt(loadavg()[0] ?? 0, 2)} after; ${cpus().length} cores`);
    console.log(
      `baseline (no controller): create ${fmt(COUNT)} Delegations              ${seconds(baselineMs)}  (${fmt(COUNT / (baselineMs / 1000))} objects/s)`,
    );
    if (floorMs !== undefined) {
      console.log(
        `floor (no controller): create ${fmt(COUNT)}, each + one status write  ${seconds(floorMs)}  (ratio to baseline ${fmt(floorMs / baselineMs, 2)}: the least any controller writing a status can reach)`,
      );
      // What one write costs the API server: a create, and (floor minus creates) a status write.
      const createCpu = (baseAfter.apiServer - baseBefore.apiServer) / COUNT;
      const statusCpu = (floorAfter.apiServer - floorBefore.apiServer) / COUNT - createCpu;
      console.log(
        `kube-apiserver CPU per write: create ${fmt(createCpu * 1000, 2)} ms, status write ${fmt(statusCpu * 1000, 2)} ms (${fmt(statusCpu / createCpu, 2)} creates)`,
      );
    }
    console.log(
      `with writ controller (${WORKERS} workers, leader-elected, ${certs ? "admission webhooks on" : "no admission webhooks"}): create ${fmt(COUNT)}  ${seconds(createMs)}`,
    );
    if (outcome === "ready") {
      console.log(
        `  all ${fmt(COUNT)} Ready=True after                                ${seconds(readyMs)} from the first create  (${fmt(COUNT / (readyMs / 1000))} reconciled/s)`,
      );
    } else {
      console.log(`  !! only ${fmt(readyAt.size)} of ${fmt(COUNT)} Ready after ${seconds(readyMs)}`);
    }
    console.log(`  ratio: time to all Ready / baseline create time = ${fmt(readyMs / baselineMs, 2)}`);
    console.log(
      `controller memory (pid ${pid}): idle RSS ${fmt((idle?.rssKb ?? 0) / 1024)} MiB; peak VmHWM ${fmt((mem?.hwmKb ?? 0) / 1024)} MiB; peak sampled RSS ${fmt(peakRss / 1024)} MiB; RSS at the end ${fmt((mem?.rssKb ?? 0) / 1024)} MiB`,
    );
    console.log(
      `reconciles (delegation): ${fmt(reconciles.reduce((a, b) => a + b, 0))}, errors ${fmt(errors[0] ?? 0)}; rows stored for the organization: ${rows.rows[0]?.n}`,
    );
    const cpu = (k: keyof typeof cpuBefore) => {
      const a = cpuBefore[k];
      const b = cpuAfter[k];
      return a === undefined || b === undefined ? "?" : `${fmt(b - a, 1)} s`;
    };
    console.log(
      `CPU from the first create to all Ready: kube-apiserver ${cpu("apiServer")}, etcd ${cpu("etcd")}, Postgres ${cpu("postgres")}, controller ${cpu("controller")}, this process (creates, watch) ${cpu("bench")}`,
    );
    if (outcome !== "ready" || Number(rows.rows[0]?.n) !== COUNT || (errors[0] ?? 0) > 0) {
      console.log(started.output().slice(-3000));
      process.exitCode = 1;
    }
  } finally {
    if (controller) console.log(`controller stopped: ${await stopChild(controller)}`);
    await env?.stop();
    await pg?.stop();
    await rm(dataDir, { recursive: true, force: true });
    await rm(certsDir, { recursive: true, force: true });
  }
}

await main();
