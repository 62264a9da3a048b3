/**
 * `npm run bench:propagation`: how fast a revocation declared in Kubernetes reaches verify
 * through the data plane's watch, everything on 127.0.0.1 (a real kube-apiserver 1.20 + etcd
 * from envtest, an embedded Postgres, `writ serve` as a child process with KUBECONFIG). NO
 * controller runs: the grants are stored in Postgres directly (./propagation/world.ts), so
 * only the watch can carry the revocations.
 *
 * Measured, one revocation at a time, BENCH_REVOCATIONS (100) of each:
 * (a) watch: a merge PATCH of the Delegation (`spec.state: revoked`, with the annotation
 *     `writ.dev/revoked-at`) through the API server, while verify of that grant is polled every
 *     BENCH_POLL_MS (5 ms; bounded by 5 s): revoke-to-first-DENY, from just before the PATCH is
 *     sent to the first DENY answer. Also the PATCH's own round trip (the API server's floor).
 * (b) baseline, same run: the revocation written to Postgres instead (`revokeDelegation` in a
 *     transaction from this process, as the controller's reconcile does), reaching the data
 *     plane through LISTEN/NOTIFY; the same polling.
 * Printed: p50 / p90 / p99 / max (ms) of each, the data plane's writ_revocation_lag_seconds,
 * and the goal p99 <= 500 ms for (a). Every child is stopped by its pid; the API server, etcd
 * and Postgres are stopped and their folders removed at the end.
 */
import type { KubeObject } from "../../src/sources/kubernetes/objects.js";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../src/dev/free-port.js";
import { newPassword, startPostgres, type RunningPostgres } from "../../src/dev/postgres.js";
import { KubeClient, loadKubeConfig } from "../../src/sources/kubernetes/client.js";
import { revokeDelegation } from "../../src/store/delegations.js";
import { migrate } from "../../src/store/migrate.js";
import { createPool, withTransaction } from "../../src/store/pool.js";
import { ensureEnvtest, startEnvtest, type Envtest } from "../../test/helpers/envtest.js";
import { startServeProcess, type ServeProcess } from "../../test/helpers/serve-process.js";
import { claimAsOwner, createOperator, delegationResource, storeGrants, verifyOnce, type Grant } from "./propagation/world.js";
import { quantile } from "./stats.js";

const COUNT = Number(process.env.BENCH_REVOCATIONS ?? 100);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 5);
const POLL_LIMIT_MS = 5000;
const GOAL_P99_MS = 500;
const NS = "bench";
const CRDS = fileURLToPath(new URL("../../crds/", import.meta.url));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : "n/a");

/** One measured revocation. */
interface Sample {
  /** Revoke (just before sending) to the first DENY answer. */
  toDenyMs: number;
  /** The revoking call's own duration (PATCH round trip, or the Postgres transaction). */
  callMs: number;
  polls: number;
}

/** Revokes with `revoke()` and polls verify of `g` until it answers DENY (DELEGATION_REVOKED). */
async function measure(serve: ServeProcess, key: string, g: Grant, revoke: () => Promise<unknown>): Promise<Sample> {
  const t0 = performance.now();
  const call = revoke().then(() => performance.now() - t0);
  let polls = 0;
  for (;;) {
    const started = performance.now();
    const a = await verifyOnce(serve.url, key, g);
    polls += 1;
    if (a.verdict === "DENY") {
      if (!a.reasons?.includes("DELEGATION_REVOKED")) throw new Error(`${g.name}: DENY for another reason: ${JSON.stringify(a)}`);
      return { toDenyMs: performance.now() - t0, callMs: await call, polls };
    }
    if (a.verdict !== "ALLOW") throw new Error(`${g.name}: unexpected answer ${JSON.stringify(a)}`);
    if (performance.now() - t0 > POLL_LIMIT_MS) throw new Error(`${g.name}: still ALLOW ${POLL_LIMIT_MS} ms after the revocation`);
    await sleep(Math.max(0, POLL_MS - (performance.now() - started)));
  }
}

function summary(name: string, values: number[]): string {
  const s = Float64Array.from(values).sort();
  return `${name.padEnd(44)} p50 ${ms(quantile(s, 0.5)).padStart(9)}  p90 ${ms(quantile(s, 0.9)).padStart(9)}  p99 ${ms(quantile(s, 0.99)).padStart(9)}  max ${ms(s[s.length - 1] ?? Number.NaN).padStart(9)}`;
}

async function main(): Promise<void> {
  const loadAtStart = loadavg()[0] ?? 0;
  const dataDir = await mkdtemp(join(tmpdir(), "writ-bench-propagation-"));
  let pg: RunningPostgres | undefined;
  let env: Envtest | undefined;
  let serve: ServeProcess | undefined;
  try {
    env = await startEnvtest({ binDir: await ensureEnvtest() });
    pg = await startPostgres({ dataDir, port: await freePort(), password: newPassword(), serverSettings: { max_connections: "100" } });
    const dbUrl = pg.url("postgres");
    await migrate(dbUrl);
    const pool = createPool(dbUrl, { max: 8 });
    const operator = await createOperator(pool, "Propagation Corp");
    const watched = await storeGrants(pool, operator.orgId, "pw", COUNT);
    const baseline = await storeGrants(pool, operator.orgId, "pb", COUNT);

    const kubectl = async (args: string[]) => {
      const r = await (env as Envtest).kubectl(args);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.stderr}`);
    };
    await kubectl(["apply", "-f", CRDS]);
    await kubectl(["wait", "--for=condition=Established", "--timeout=60s", "crd/delegations.writ.dev", "crd/intentagreements.writ.dev"]);
    await kubectl(["create", "namespace", NS]);
    await kubectl(["label", "namespace", NS, `writ.dev/org-id=${operator.orgId}`]);
    const client = new KubeClient(loadKubeConfig(env.kubeconfigPath));
    const collection = `/apis/writ.dev/v1alpha1/namespaces/${NS}/delegations`;
    // As the controller would have stored them: each record owned by its resource (the watch marks only an owner's revocation).
    for (const g of watched)
      await claimAsOwner(pool, "delegation", g.delegationId, await client.create<KubeObject>(collection, delegationResource(g, { stored: true })));

    serve = await startServeProcess({ env: { DATABASE_URL: dbUrl, KUBECONFIG: env.kubeconfigPath, WRIT_WATCH_NAMESPACES: NS, LOG_LEVEL: "warn" } });
    const s = serve;
    const deadline = Date.now() + 60_000;
    while ((await verifyOnce(s.url, operator.key, watched[0] as Grant)).verdict !== "ALLOW") {
      if (Date.now() > deadline) throw new Error(`verify does not answer ALLOW:\n${s.output()}`);
      await sleep(200);
    }
    for (const g of [...watched, ...baseline]) {
      const a = await verifyOnce(s.url, operator.key, g);
      if (a.verdict !== "ALLOW") throw new Error(`${g.name}: warm-up answered ${JSON.stringify(a)}`);
    }
    console.log(
      `envtest kube-apiserver 1.20 at ${env.server}; Postgres on 127.0.0.1:${pg.port}; writ serve pid ${s.pid}; ${cpus().length} cores, load ${loadAtStart.toFixed(2)}`,
    );
    console.log(`${COUNT} revocations of each kind, one at a time; verify polled every ${POLL_MS} ms (up to ${POLL_LIMIT_MS} ms)\n`);

    const viaWatch: Sample[] = [];
    for (const g of watched) {
      const patch = { metadata: { annotations: { "writ.dev/revoked-at": new Date().toISOString() } }, spec: { state: "revoked" } };
      viaWatch.push(await measure(s, operator.key, g, () => client.mergePatch(`${collection}/${g.name}`, patch)));
    }
    const viaPostgres: Sample[] = [];
    for (const g of baseline) {
      viaPostgres.push(
        await measure(s, operator.key, g, () =>
          withTransaction(pool, (c) => revokeDelegation(c, operator.orgId, g.delegationId, { reason: "propagation bench", by: "bench", at: new Date() })),
        ),
      );
    }
    const stillActive = await pool.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM delegations WHERE revoked_at IS NULL AND delegation_id = ANY($1::text[])",
      [watched.map((g) => g.delegationId)],
    );
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    const lag = (what: string) =>
      Number(new RegExp(`^writ_revocation_lag_seconds_${what}\\{[^}]*kind="delegation"[^}]*\\} ([0-9.e+-]+)`, "m").exec(metrics)?.[1] ?? Number.NaN);
    await pool.end();
    client.close();

    const p99 = quantile(Float64Array.from(viaWatch.map((v) => v.toDenyMs)).sort(), 0.99);
    console.log(
      summary(
        "(a) watch: PATCH -> first DENY",
        viaWatch.map((v) => v.toDenyMs),
      ),
    );
    console.log(
      summary(
        "    the PATCH round trip alone",
        viaWatch.map((v) => v.callMs),
      ),
    );
    console.log(
      summary(
        "(b) baseline: Postgres revoke -> first DENY",
        viaPostgres.map((v) => v.toDenyMs),
      ),
    );
    console.log(
      summary(
        "    the revoking transaction alone",
        viaPostgres.map((v) => v.callMs),
      ),
    );
    console.log(
      `verify polls per revocation: (a) mean ${(viaWatch.reduce((t, v) => t + v.polls, 0) / COUNT).toFixed(1)}, (b) mean ${(viaPostgres.reduce((t, v) => t + v.polls, 0) / COUNT).toFixed(1)}`,
    );
    console.log(
      `data plane writ_revocation_lag_seconds{kind="delegation"}: count ${lag("count")}, mean ${ms((lag("sum") / lag("count")) * 1000)} (annotation to mark in the index)`,
    );
    console.log(`rows of (a) still active in Postgres (no controller ran, so all ${COUNT}): ${stillActive.rows[0]?.n}`);
    console.log(`load average (1 min): ${loadAtStart.toFixed(2)} before, ${(loadavg()[0] ?? 0).toFixed(2)} after`);
    console.log(`goal: p99 of (a) <= ${GOAL_P99_MS} ms: ${p99 <= GOAL_P99_MS ? "met" : "NOT met"} (${ms(p99)})`);
    if (p99 > GOAL_P99_MS) process.exitCode = 1;
  } finally {
    if (serve) await serve.stop();
    await env?.stop();
    await pg?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
