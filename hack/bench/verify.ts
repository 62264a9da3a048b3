/**
 * `npm run bench:verify`: `POST /v1/verify` under load, everything on 127.0.0.1, in one run.
 *
 * Set-up: its own embedded Postgres (temp folder, Postgres' default durability), `writ serve`
 * as a child process on a port picked here, and BENCH_AGENTS (1,000) agents for the ALLOW path
 * plus BENCH_DENY_AGENTS (20,000) for the DENY path, each with one agreement bound to its own
 * delegation, ample budgets (./verify/seed.ts). Load always comes from a SEPARATE process
 * (./verify/driver.ts), BENCH_CONNECTIONS keep-alive connections, BENCH_SECONDS per scenario,
 * a fresh body (unique action_id) per request. Every cache is warmed first (one ALLOW per
 * ALLOW agent, one DENY per DENY agent) and each path runs once before it is measured.
 *
 * (a) DENY path: an action above the ceiling. A verify that finds five stored DENYs of its
 *     agent within 60 s REVOKEs the delegation (DENIED_ATTEMPT_BURST), so each DENY agent is
 *     sent four more after its warm-up DENY, in four rounds of one DENY per agent.
 * (b) ALLOW path over BENCH_AGENTS agreements: every answer commits a ledger entry.
 * (c) a bare Fastify echo of the same body (./verify/echo.ts), same logger settings, run in
 *     four rounds of BENCH_SECONDS / 4 that alternate with those of (a): a DENY round, an echo
 *     round, and so on. The machine's speed drifts during a run (a shared host: the echo alone
 *     was seen at 9,573 and 15,020 req/s a few seconds apart), and alternating makes the drift weigh
 *     on both sides of a/c alike. Each side's line pools its four rounds (requests, time, CPU
 *     and latencies summed). writ serve keeps snapshots for SNAPSHOT_TTL_MS (below), and the
 *     snapshot reads during (a) are printed: all of them should be from memory (the warm-up
 *     read every agent; a read from Postgres means a snapshot expired and the run measured
 *     cold reads too).
 * (d) the ALLOW path's ledger writes alone (the group commit verify uses, `spendQueue`,
 *     ./verify/spend-loop.ts) against the same Postgres, writ serve's pool size, the same
 *     concurrency.
 * (e) a plain ledger transaction (./verify/ledger-loop.ts: SELECT … FOR UPDATE of an account,
 *     INSERT an entry, UPDATE a total, COMMIT; 1,000 accounts) through `pg` against the same
 *     Postgres, writ serve's pool size, 10 concurrent loops: what Postgres needs to record a
 *     spend durably, one transaction each. (b) and (e) run in four alternating rounds of
 *     BENCH_SECONDS / 4 each, as (a) and (c) do, each line pooling its rounds.
 * The ALLOW path also runs open-loop at HALF the requests/s measured in (b), for its p99,
 * right after the rounds of (b) and (e) and a VACUUM and CHECKPOINT (their tens of thousands
 * of rows would otherwise leave Postgres vacuuming and checkpointing during it), before (d).
 * Each line also gives CPU microseconds per request (Linux /proc, ./proc-cpu.ts) of the server
 * process (writ serve, or the echo), of the load generator (the driver; in (d) the loop itself)
 * and of the whole Postgres cluster: on a small machine they share the cores, so these say
 * where the time of a request goes.
 * Goals printed beside the figures: a/c >= 0.5, b/e >= 0.6, p99 <= 25 ms at half load (b/d
 * is printed too: what verify adds to its own ledger writes).
 *
 * WRIT_SPEND_BATCH_MAX, WRIT_SPEND_BATCH_WAIT_MS and WRIT_SPEND_BATCHES_IN_FLIGHT in the
 * environment are passed to every writ serve of the bench (the group commit's bounds,
 * docs/verify.md), and so is WRIT_PERIOD_HOUR_COUNTERS_FROM (with BENCH_PERIODS).
 * writ serve runs as the image runs it: the compiled build (dist/, built by `npm run build` at
 * the start of the run, about 10 s). BENCH_RUN_FROM=src runs the TypeScript sources through tsx
 * instead (a developer's `writ`; its loader adds a few microseconds of CPU per request).
 * BENCH_PROFILE=1 runs writ serve with --cpu-prof (profiles under the printed folder);
 * BENCH_ONLY=deny stops after (a) (to profile the DENY path alone); BENCH_ONLY=allow runs (b) alone.
 * Every child is stopped by its pid; the cluster is stopped and its folder removed at the end.
 *
 * Then, unless BENCH_CLUSTER=0, the cost of a synchronous replica: a two-node Patroni cluster
 * (Debian's PostgreSQL 15, etcd and Patroni on 127.0.0.1, ../patroni/cluster.ts; installed with
 * apt when missing; about 20 s to start), BENCH_CLUSTER_AGENTS (1,000) agents seeded into it,
 * and the ALLOW path (closed loop, then open loop at half of its rate for the p99) through a
 * fresh `writ serve` on the multi-host URL, twice: (L) WRIT_SYNCHRONOUS_COMMIT=local (the
 * primary alone: the same server without waiting for the standby) and (R) remote_apply (each
 * ALLOW answered once the standby has applied its entry). Printed beside (b), the single
 * embedded Postgres of the same run, with the ratios R/b and R/L; the Postgres CPU column there
 * is the primary's alone (the standby's replay is not counted).
 *
 * With BENCH_CITUS=1, then the ALLOW path (closed loop, then open loop at half its rate; the
 * database settled first) on two databases side by side, each with BENCH_CLUSTER_AGENTS agents
 * seeded through a `writ serve` of its own, their closed loops in alternating rounds (P C C P
 * P C C P, CITUS_ROUNDS of each, BENCH_SECONDS in all for each), then each open loop: (P) on
 * Debian's PostgreSQL 15 alone (the same binaries, without Citus), and (C) on a Citus cluster (../citus/cluster.ts: a coordinator and two workers, BENCH_CITUS_WORKERS
 * to change it, Citus built by
 * ../citus/provision.sh when missing) through the coordinator (the spend transactions sent to the
 * workers themselves: WRIT_CITUS_DIRECT, passed on to writ serve). Printed beside (b) with C/P
 * (goal >= 0.5), the CPU and WAL bytes per ALLOW of each node, and the two-phase commits
 * during the closed loop (0: every ALLOW was a transaction on one worker; the per-agent tables
 * are distributed by agent_id, docs/scale.md). Those writ serve processes keep snapshots as
 * (b)'s do (SNAPSHOT_TTL_MS), and run without the periodic retention pass (WRIT_RETENTION_INTERVAL_MS=0: its first pass would land in the
 * measured loops, and its deletes across every shard commit in two phases). BENCH_ONLY=citus
 * runs (P) and (C) alone.
 *
 * BENCH_PERIODS=1 puts limits per period on every agreement (./verify/seed.ts: a calendar day
 * and month in Europe/Berlin and a rolling 24 hours on the intent, a calendar week in New York
 * on the delegation; ample, never refusing): every ALLOW then also reads and raises its
 * windows' counters in the spend transaction. Run it beside a run without to see their cost
 * (the goal for b/e with them is >= 0.7). BENCH_PERIODS=intent seeds the intent's three alone
 * (no delegation limits: its row is not locked either), BENCH_PERIODS=rolling the intent's
 * rolling 24 hours alone: what each part costs.
 *
 * BENCH_STATEMENTS=N (with (P)/(C), or with BENCH_ONLY=allow for (b)) loads pg_stat_statements on those nodes (track = all,
 * planning counted) and prints, per node, the N statements that took the most time (planning
 * and execution) during the closed loop, with their calls and time per ALLOW: where each
 * node's CPU goes; for (b) also the rows each table took per ALLOW (inserted, updated and of
 * those HOT, deleted: pg_stat_user_tables).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { verifyLedger } from "../../src/core/agreement/index.js";
import { freePort } from "../../src/dev/free-port.js";
import { newPassword, startPostgres, type RunningPostgres } from "../../src/dev/postgres.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { migrate } from "../../src/store/migrate.js";
import { createPool } from "../../src/store/pool.js";
import { startPatroniCluster, type PatroniCluster } from "../patroni/cluster.js";
import { provisionCitus, startCitusCluster, type CitusCluster, type CitusNode } from "../citus/cluster.js";
import { childPids, cpuSeconds, postmasterPid, treeCpuSeconds } from "./proc-cpu.js";
import type { DriverConfig, DriverResult } from "./verify/driver.js";
import { benchPeriodsFromEnv, seed, CEILING, type BenchPeriods, type SeededAgent } from "./verify/seed.js";
import { summarize } from "./stats.js";
import { ledgerLoop } from "./verify/ledger-loop.js";
import { spendLoop } from "./verify/spend-loop.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ALLOW_AGENTS = Number(process.env.BENCH_AGENTS ?? 1000);
const DENY_AGENTS = Number(process.env.BENCH_DENY_AGENTS ?? 20_000);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? "warn";
const PROFILE = process.env.BENCH_PROFILE === "1";
/** BENCH_PERF=1: `perf record -g` of the Postgres backends of each (P) and (C) node during its closed loop (the files are printed; `perf report -i FILE`). */
const PERF = process.env.BENCH_PERF === "1";
const CLUSTER = process.env.BENCH_CLUSTER !== "0";
const CLUSTER_AGENTS = Number(process.env.BENCH_CLUSTER_AGENTS ?? 1000);
const CITUS = process.env.BENCH_CITUS === "1";
const PERIODS = benchPeriodsFromEnv(process.env);
/** What (b)'s line says of BENCH_PERIODS. */
const periodsLabel = () => (PERIODS === undefined ? "" : ` with period limits${PERIODS === "all" ? "" : ` (${PERIODS})`}`);
/** What the b/e line says of each BENCH_PERIODS. */
const PERIODS_NOTE: Record<BenchPeriods, string> = { all: "", intent: ", the intent's alone", rolling: ", the intent's rolling window alone" };
/**
 * The settings of this shell that reach every writ serve of the bench: WRIT_SPEND_BATCH* (to
 * compare group-commit bounds) and WRIT_PERIOD_* (hour counters).
 */
const passedSettings = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("WRIT_SPEND_BATCH") || k.startsWith("WRIT_PERIOD_")));
const STATEMENTS = Number(process.env.BENCH_STATEMENTS ?? 0);
const CITUS_WORKERS = Number(process.env.BENCH_CITUS_WORKERS ?? 2);
const GOAL_CITUS_RATIO = 0.5;
/** (P) and (C)'s closed loops: rounds of each, alternating (P C C P ...), BENCH_SECONDS in all for each. */
const CITUS_ROUNDS = 4;
/** BENCH_CITUS_SHARDS: the cluster's citus.shard_count (default Citus's own, 32). */
const CITUS_SHARDS: Record<string, number> = process.env.BENCH_CITUS_SHARDS ? { "citus.shard_count": Number(process.env.BENCH_CITUS_SHARDS) } : {};
const ONLY_DENY = process.env.BENCH_ONLY === "deny";
const ONLY_ALLOW = process.env.BENCH_ONLY === "allow";
const ONLY_CITUS = process.env.BENCH_ONLY === "citus";
const RUN_FROM = process.env.BENCH_RUN_FROM === "src" ? "src" : "dist";
/** writ serve's pool size (createPool's default). */
const SERVE_POOL_SIZE = 10;
/** Scenario (e): concurrent loops and accounts of the plain ledger transaction. */
const PLAIN_CONNECTIONS = 10;
const PLAIN_ROWS = 1000;
/** Measured DENYs per agent: with the warm-up's, five within 60 s, the most DENIED_ATTEMPT_BURST lets pass as DENYs (the sixth would REVOKE). */
const DENIES_PER_AGENT = 4;
/** Alternating rounds of (a)/(c) and of (b)/(e): one per measured DENY of an agent. */
const ROUNDS = DENIES_PER_AGENT;
/** Requests each measuring driver first sends to a server of its own (./verify/driver.ts): its code is compiled before its run is measured. */
const DRIVER_WARMUP = Number(process.env.BENCH_DRIVER_WARMUP ?? 20_000);
/**
 * writ serve's WRIT_CACHE_TTL_MS: the DENY agents' snapshots, read by the warm-up, must outlive
 * the four rounds of (a) (each agent verifies once a round), which on a slow host take longer
 * than the default 60 s. A warm DENY does the same work whatever the lifetime; the snapshot
 * reads during (a) are printed to show that every one was served from memory.
 */
const SNAPSHOT_TTL_MS = 600_000;
const GOAL_DENY_RATIO = 0.5;
const GOAL_ALLOW_RATIO = 0.6;
/** The goal of b/e with limits per period on every agreement (BENCH_PERIODS=1). */
const GOAL_ALLOW_RATIO_PERIODS = 0.7;
const GOAL_HALF_P99_MS = 25;
const PG_SETTINGS = { max_connections: "200", shared_buffers: "256MB" };
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const DRIVER = fileURLToPath(new URL("./verify/driver.ts", import.meta.url));
const ECHO = fileURLToPath(new URL("./verify/echo.ts", import.meta.url));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

/** Runs a child to completion and returns its stdout (throws on a non-zero exit). */
function runChild(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.at(-2) ?? ""} exited with ${code}`))));
  });
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((r) => child.once("exit", r));
  process.kill(child.pid, "SIGTERM");
  const timer = setTimeout(() => child.pid !== undefined && process.kill(child.pid, "SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Spawns a server child and waits until `ready` answers 2xx on it. */
async function startChild(args: string[], env: NodeJS.ProcessEnv, ready: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    env: { ...env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited during start-up`);
    if (
      await fetch(`${url}${ready}`).then(
        (r) => r.status < 500,
        () => false,
      )
    )
      return { child, url };
    await sleep(100);
  }
  await stopChild(child);
  throw new Error(`${args.join(" ")} did not become ready`);
}

let runs = 0;
/** One load run from a separate driver process. */
async function drive(
  url: string,
  token: string | undefined,
  agents: readonly SeededAgent[],
  o: { amount: number; seconds?: number; maxRequests?: number; rate?: number; warmup?: number; latencies?: boolean },
): Promise<DriverResult> {
  const config: DriverConfig = {
    url,
    path: "/v1/verify",
    ...(token ? { token } : {}),
    connections: CONNECTIONS,
    seconds: o.seconds ?? SECONDS,
    ...(o.maxRequests !== undefined ? { maxRequests: o.maxRequests } : {}),
    ...(o.rate !== undefined ? { rate: o.rate } : {}),
    agents: agents.map((a) => a.agentId),
    amount: o.amount,
    idPrefix: `run${++runs}-${randomBytes(3).toString("hex")}`,
    ...(o.warmup !== undefined ? { warmup: o.warmup } : {}),
    ...(o.latencies ? { latencies: true } : {}),
  };
  const file = join(tmpdir(), `writ-bench-verify-${process.pid}-${runs}.json`);
  await writeFile(file, JSON.stringify(config));
  try {
    return JSON.parse(await runChild(["--import", "tsx", DRIVER, file])) as DriverResult;
  } finally {
    await rm(file, { force: true });
  }
}

/** Waits until verify answers ALLOW (the revocation index has loaded). */
async function untilAllowing(url: string, token: string, agent: SeededAgent): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const r = await drive(url, token, [agent], { amount: 1, maxRequests: 1, seconds: 5 });
    if (r.verdicts.ALLOW === 1) return;
    await sleep(100);
  }
  throw new Error("verify does not answer ALLOW");
}

/** A load run with the CPU seconds the server process and the Postgres cluster used meanwhile. */
type Measured = DriverResult & { serverCpu?: number; pgCpu?: number };

let pgPid: number | undefined;

/** Runs `run` and adds the CPU used meanwhile by process `serverPid` and by Postgres. */
async function measured(serverPid: number | undefined, run: () => Promise<DriverResult>): Promise<Measured> {
  const p0 = await treeCpuSeconds(pgPid);
  const s0 = cpuSeconds(serverPid);
  const r = await run();
  const s1 = cpuSeconds(serverPid);
  const p1 = await treeCpuSeconds(pgPid);
  return { ...r, ...(s0 !== undefined && s1 !== undefined ? { serverCpu: s1 - s0 } : {}), ...(p0 !== undefined && p1 !== undefined ? { pgCpu: p1 - p0 } : {}) };
}

/** Several runs of one scenario as one: their requests, time and CPU summed, latencies pooled. */
function pooled(runs: readonly Measured[]): Measured {
  const sum = (f: (r: Measured) => number | undefined) => (runs.every((r) => f(r) !== undefined) ? runs.reduce((t, r) => t + (f(r) ?? 0), 0) : undefined);
  const add = (f: (r: Measured) => Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const r of runs) for (const [k, v] of Object.entries(f(r))) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const serverCpu = sum((r) => r.serverCpu);
  const pgCpu = sum((r) => r.pgCpu);
  return {
    ...summarize(
      runs.flatMap((r) => r.latencies ?? []),
      sum((r) => r.seconds) ?? 0,
    ),
    statuses: add((r) => r.statuses),
    verdicts: add((r) => r.verdicts),
    errors: sum((r) => r.errors) ?? 0,
    cpuSeconds: sum((r) => r.cpuSeconds) ?? 0,
    ...(serverCpu !== undefined ? { serverCpu } : {}),
    ...(pgCpu !== undefined ? { pgCpu } : {}),
  };
}

function line(name: string, r: Measured): string {
  const other = Object.entries(r.verdicts)
    .map(([k, v]) => `${k} ${fmt(v)}`)
    .join(", ");
  const us = (s: number | undefined) => (s === undefined || r.requests === 0 ? "-" : fmt((s * 1e6) / r.requests));
  const cpu = `CPU us/req: server ${us(r.serverCpu)}, load ${us(r.cpuSeconds)}, postgres ${us(r.pgCpu)}`;
  return `${name.padEnd(44)} ${fmt(r.perSecond).padStart(7)} req/s   p50 ${fmt(r.p50, 2).padStart(6)} ms   p99 ${fmt(r.p99, 2).padStart(6)} ms   ${cpu}   (${fmt(r.requests)} in ${fmt(r.seconds, 1)} s: ${other}${r.errors ? `, ${r.errors} errors` : ""})`;
}

/** The values of writ serve's metrics `series` (each a name with its labels, as /metrics writes it; 0 when absent). */
async function metricValues(url: string, series: readonly string[]): Promise<number[]> {
  const lines = (await (await fetch(`${url}/metrics`)).text()).split("\n");
  return series.map((s) => Number(lines.find((l) => l.startsWith(`${s} `))?.slice(s.length + 1) ?? 0));
}

/** The spend transactions writ serve committed so far and the spends they held (`writ_spend_batch_size`). */
async function spendBatches(url: string): Promise<{ count: number; sum: number }> {
  const [count = 0, sum = 0] = await metricValues(url, ["writ_spend_batch_size_count", "writ_spend_batch_size_sum"]);
  return { count, sum };
}

/** `writ_verify_snapshot_reads_total` of writ serve so far, by result. */
async function snapshotReads(url: string): Promise<{ hit: number; miss: number }> {
  const [hit = 0, miss = 0] = await metricValues(url, ['writ_verify_snapshot_reads_total{result="hit"}', 'writ_verify_snapshot_reads_total{result="miss"}']);
  return { hit, miss };
}

function expectOnly(what: string, r: DriverResult, verdict: string): void {
  const wrong = r.requests - (r.verdicts[verdict] ?? 0);
  if (wrong > 0 || r.errors > 0)
    console.log(`  !! ${what}: ${wrong} answers were not ${verdict}, ${r.errors} errors: ${JSON.stringify({ statuses: r.statuses, verdicts: r.verdicts })}`);
}

async function checkLedgers(url: string, agents: readonly SeededAgent[]): Promise<string> {
  const pool = createPool(url, { max: 2 });
  try {
    let entries = 0;
    for (const a of agents.slice(0, 50)) {
      const rec = await loadAgreementWithLedger(pool, a.agreementId);
      if (!rec || verifyLedger(rec).state !== "ok") throw new Error(`ledger of ${a.agreementId} does not verify`);
      entries += rec.ledger?.length ?? 0;
    }
    const { rows } = await pool.query<{ n: string }>("SELECT count(*) AS n FROM ledger_entries");
    return `${fmt(Number(rows[0]?.n))} ledger entries in all; the chains of 50 agreements (${fmt(entries)} entries) verify`;
  } finally {
    await pool.end();
  }
}

/**
 * Settles Postgres before a measured run, as pgbench does before its own: VACUUM (ANALYZE) of
 * the database, then a CHECKPOINT, so the autovacuum and checkpoint the seeding (or the
 * previous scenario's rows) would start are not run during the measurement.
 */
async function settlePostgres(url: string): Promise<void> {
  const pool = createPool(url, { max: 1 });
  try {
    await pool.query("VACUUM (ANALYZE)");
    await pool.query("CHECKPOINT");
  } finally {
    await pool.end();
  }
}

/** Builds dist/ (`npm run build`) when writ serve is to run compiled. */
function buildIfCompiled(): void {
  if (RUN_FROM !== "dist") return;
  const r = spawnSync(process.execPath, ["--import", "tsx", join(REPO, "hack/build/main.ts")], { cwd: REPO, stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error(`npm run build failed (exit ${r.status}); BENCH_RUN_FROM=src runs the sources`);
}

async function main(): Promise<void> {
  buildIfCompiled();
  if (ONLY_CITUS) return citusRuns(undefined, undefined, undefined);
  const loadAtStart = loadavg()[0] ?? 0;
  const dataDir = await mkdtemp(join(tmpdir(), "writ-bench-verify-"));
  const profileDir = PROFILE ? await mkdtemp(join(tmpdir(), "writ-bench-verify-prof-")) : null;
  let pg: RunningPostgres | undefined;
  let serve: ChildProcess | undefined;
  let echo: ChildProcess | undefined;
  try {
    pg = await startPostgres({
      dataDir,
      port: await freePort(),
      password: newPassword(),
      serverSettings: { ...PG_SETTINGS, ...statementSettings("pg_stat_statements") },
    });
    const dbUrl = pg.url("postgres");
    pgPid = postmasterPid(dataDir);
    await migrate(dbUrl);
    console.log(`Postgres on 127.0.0.1:${pg.port}: default durability (fsync, synchronous_commit on), ${JSON.stringify(PG_SETTINGS)}`);
    const admin = randomBytes(24).toString("base64url");
    const env = {
      ...passedSettings(),
      WRIT_CACHE_TTL_MS: String(SNAPSHOT_TTL_MS),
      WRIT_RUN_FROM: RUN_FROM,
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: dbUrl,
      BUR_ADMIN_TOKEN: admin,
      SVC_LOG_SIGNING_SEED: randomBytes(32).toString("hex"),
      WRIT_CACHE_MAX_AGENTS: String(Math.max(10_000, ALLOW_AGENTS + DENY_AGENTS)),
    };
    const serveArgs = [...(profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : []), join(REPO, "bin/writ.mjs"), "serve"];
    const started = await startChild(serveArgs, env, "/readyz");
    serve = started.child;
    const url = started.url;
    console.log(
      `writ serve pid ${serve.pid} at ${url} (${RUN_FROM === "dist" ? "the compiled build, dist/" : "the sources, through tsx"}; LOG_LEVEL ${LOG_LEVEL}, pool ${SERVE_POOL_SIZE}, WRIT_CACHE_TTL_MS ${SNAPSHOT_TTL_MS}); load from separate driver processes, ${CONNECTIONS} connections`,
    );

    const t0 = performance.now();
    const seeded = await seed(url, dbUrl, admin, ALLOW_AGENTS + DENY_AGENTS, { ...(PERIODS ? { periods: PERIODS } : {}) });
    const allowPool = seeded.agents.slice(0, ALLOW_AGENTS);
    const denyPool = seeded.agents.slice(ALLOW_AGENTS);
    console.log(`seeded ${fmt(seeded.agents.length)} agents with one agreement each in ${fmt((performance.now() - t0) / 1000, 1)} s`);
    const token = seeded.operatorKey;
    await untilAllowing(url, token, allowPool[0] as SeededAgent);

    // Warm-up: every agent's snapshot and agreement into memory, JIT for both paths: one ALLOW
    // per ALLOW agent, then both paths on the ALLOW agents, the echo, and last one DENY per DENY
    // agent (the first of its five allowed denials): last, nearest to the rounds of (a).
    await drive(url, token, allowPool, { amount: 1, maxRequests: allowPool.length, seconds: 120 });
    await drive(url, token, allowPool, { amount: 1, seconds: 3 });
    await drive(url, token, allowPool, { amount: CEILING * 10, maxRequests: Math.min(2 * ALLOW_AGENTS, 4000), seconds: 3 });
    const echoStarted = await startChild(["--import", "tsx", ECHO], { PATH: process.env.PATH }, "/healthz");
    echo = echoStarted.child;
    await drive(echoStarted.url, token, allowPool, { amount: 1, seconds: 2 });
    await drive(url, token, denyPool, { amount: CEILING * 10, maxRequests: denyPool.length, seconds: 120 });

    // (a) and (c) in alternating rounds (DENY, echo, DENY, echo, ...): a change in the
    // machine's speed during the run (other tenants of the host) weighs on both alike.
    await settlePostgres(dbUrl);
    const snapshots0 = await snapshotReads(url);
    const denyRuns: Measured[] = [];
    const bareRuns: Measured[] = [];
    for (let round = 0; round < (ONLY_ALLOW ? 0 : ROUNDS); round++) {
      // One DENY per agent in each round (the driver takes agents round-robin from the first).
      denyRuns.push(
        await measured(serve.pid, () =>
          drive(url, token, denyPool, { amount: CEILING * 10, maxRequests: DENY_AGENTS, warmup: DRIVER_WARMUP, latencies: true }),
        ),
      );
      if (ONLY_DENY) continue;
      bareRuns.push(
        await measured(echo.pid, () =>
          drive(echoStarted.url, token, allowPool, { amount: 1, seconds: SECONDS / DENIES_PER_AGENT, warmup: DRIVER_WARMUP, latencies: true }),
        ),
      );
    }
    await stopChild(echo);
    echo = undefined;
    const snapshots1 = await snapshotReads(url);
    if (ONLY_ALLOW) {
      await settlePostgres(dbUrl);
      const statsPool = STATEMENTS > 0 ? createPool(dbUrl, { max: 1 }) : undefined;
      await statsPool?.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
      await statsPool?.query("SELECT pg_stat_statements_reset()");
      await statsPool?.query("SELECT pg_stat_reset()");
      const b = await measured(serve.pid, () => drive(url, token, allowPool, { amount: 1, warmup: DRIVER_WARMUP }));
      console.log(line(`(b) verify, ALLOW path, ${fmt(ALLOW_AGENTS)} agreements${periodsLabel()}`, b));
      if (statsPool) {
        for (const l of await statementLines((q, v) => statsPool.query(q, v), "embedded Postgres", "(b)", b.verdicts.ALLOW ?? 0)) console.log(l);
        for (const l of await tableLines((q) => statsPool.query(q), "(b)", b.verdicts.ALLOW ?? 0)) console.log(l);
        await statsPool.end();
      }
      return;
    }
    const deny = pooled(denyRuns);
    expectOnly("DENY path", deny, "DENY");
    const denySnapshots = `snapshot reads of writ serve during (a): ${fmt(snapshots1.hit - snapshots0.hit)} from memory, ${fmt(snapshots1.miss - snapshots0.miss)} from Postgres`;
    if (ONLY_DENY) {
      console.log(line("(a) verify, DENY path (above the ceiling)", deny));
      console.log(denySnapshots);
      return;
    }
    const bare = pooled(bareRuns);
    expectOnly("echo", bare, "none");

    // (b) and (e) in alternating rounds too, for the same reason.
    await settlePostgres(dbUrl);
    const batches0 = await spendBatches(url);
    const allowRuns: Measured[] = [];
    const plainRuns: Measured[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      allowRuns.push(
        await measured(serve.pid, () => drive(url, token, allowPool, { amount: 1, seconds: SECONDS / ROUNDS, warmup: DRIVER_WARMUP, latencies: true })),
      );
      plainRuns.push(
        await measured(undefined, () =>
          ledgerLoop(dbUrl, { connections: PLAIN_CONNECTIONS, poolSize: SERVE_POOL_SIZE, seconds: SECONDS / ROUNDS, rows: PLAIN_ROWS }),
        ),
      );
    }
    const batches1 = await spendBatches(url);
    const allow = pooled(allowRuns);
    expectOnly("ALLOW path", allow, "ALLOW");
    const plain = pooled(plainRuns);
    expectOnly("plain ledger transaction", plain, "COMMIT");

    // The half-load run right after, with Postgres settled from (e)'s rows.
    await settlePostgres(dbUrl);
    const halfRate = Math.max(1, Math.round(allow.perSecond / 2));
    const half = await measured(serve.pid, () => drive(url, token, allowPool, { amount: 1, rate: halfRate, warmup: DRIVER_WARMUP }));
    const batches2 = await spendBatches(url);
    expectOnly("ALLOW path at half load", half, "ALLOW");

    const direct = await measured(undefined, () =>
      spendLoop(dbUrl, allowPool, {
        connections: CONNECTIONS,
        poolSize: SERVE_POOL_SIZE,
        seconds: SECONDS,
        idPrefix: `direct-${randomBytes(3).toString("hex")}`,
      }),
    );
    expectOnly("ledger transaction", direct, "ALLOW");

    const ledgers = await checkLedgers(dbUrl, allowPool);

    const ok = (pass: boolean) => (pass ? "MET" : "NOT MET");
    const a = deny.perSecond / bare.perSecond;
    const b = allow.perSecond / plain.perSecond;
    const bd = allow.perSecond / direct.perSecond;
    console.log("");
    console.log(
      `load average (1 min) of the machine: ${fmt(loadAtStart, 2)} before the bench, ${fmt(loadavg()[0] ?? 0, 2)} at its end, ${cpus().length} cores`,
    );
    console.log(line("(a) verify, DENY path (above the ceiling)", deny));
    console.log(line(`(b) verify, ALLOW path, ${fmt(ALLOW_AGENTS)} agreements${periodsLabel()}`, allow));
    console.log(line("(c) bare Fastify echo of the same body", bare));
    console.log(line(`(d) spends direct (group commit), pool ${SERVE_POOL_SIZE}`, direct));
    console.log(line(`(e) plain ledger tx, ${PLAIN_CONNECTIONS} conns, ${fmt(PLAIN_ROWS)} rows`, plain));
    console.log(line(`verify ALLOW at half load (${fmt(halfRate)} req/s)`, half));
    console.log("");
    console.log(`a/c = ${fmt(a, 2)}   goal >= ${GOAL_DENY_RATIO}: ${ok(a >= GOAL_DENY_RATIO)}   (${denySnapshots})`);
    console.log(
      `a/c round by round: ${denyRuns.map((d, i) => fmt(d.perSecond / (bareRuns[i] as Measured).perSecond, 2)).join(", ")}   (DENY req/s ${denyRuns.map((d) => fmt(d.perSecond)).join(", ")}; echo req/s ${bareRuns.map((e) => fmt(e.perSecond)).join(", ")})`,
    );
    const goalB = PERIODS ? GOAL_ALLOW_RATIO_PERIODS : GOAL_ALLOW_RATIO;
    console.log(
      `b/e = ${fmt(b, 2)}   goal >= ${goalB}: ${ok(b >= goalB)}${PERIODS ? `   (BENCH_PERIODS=${process.env.BENCH_PERIODS?.trim() ?? ""}: period limits on every agreement${PERIODS_NOTE[PERIODS]})` : ""}`,
    );
    console.log(
      `b/e round by round: ${allowRuns.map((r, i) => fmt(r.perSecond / (plainRuns[i] as Measured).perSecond, 2)).join(", ")}   (ALLOW req/s ${allowRuns.map((r) => fmt(r.perSecond)).join(", ")}; plain tx/s ${plainRuns.map((r) => fmt(r.perSecond)).join(", ")})`,
    );
    console.log(`b/d = ${fmt(bd, 2)}   (verify against its own ledger writes alone)`);
    const perBatch = (a: { count: number; sum: number }, b: { count: number; sum: number }) => fmt((b.sum - a.sum) / Math.max(1, b.count - a.count), 1);
    console.log(`ALLOWs per spend transaction (group commit): ${perBatch(batches0, batches1)} in (b), ${perBatch(batches1, batches2)} at half load`);
    console.log(`verify p99 at half load = ${fmt(half.p99, 2)} ms   goal <= ${GOAL_HALF_P99_MS} ms: ${ok(half.p99 <= GOAL_HALF_P99_MS)}`);
    console.log(ledgers);
    if (CLUSTER) {
      await stopChild(serve);
      serve = undefined;
      await clusterRuns(allow, half, halfRate);
    }
    if (CITUS) {
      await stopChild(serve);
      serve = undefined;
      await citusRuns(allow, half, halfRate);
    }
  } finally {
    await stopChild(echo);
    await stopChild(serve);
    if (profileDir) console.log(`CPU profile of writ serve: ${profileDir}`);
    await pg?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** (L) and (R): the ALLOW path on a two-node synchronous Patroni cluster (see the module comment). */
async function clusterRuns(single: Measured, singleHalf: Measured, singleHalfRate: number): Promise<void> {
  let cluster: PatroniCluster | undefined;
  let serve: ChildProcess | undefined;
  try {
    const t0 = performance.now();
    cluster = await startPatroniCluster({ parameters: PG_SETTINGS });
    const { leader, standby } = await cluster.waitForSyncStandby();
    pgPid = cluster.postmasterPid(leader) ?? undefined;
    await migrate(cluster.url());
    console.log("");
    console.log(
      `Patroni cluster up in ${fmt((performance.now() - t0) / 1000, 1)} s: primary ${leader.name} (127.0.0.1:${leader.pgPort}), synchronous standby ${standby.name} (127.0.0.1:${standby.pgPort}), PostgreSQL 15, ${JSON.stringify(PG_SETTINGS)}`,
    );
    const admin = randomBytes(24).toString("base64url");
    const base = {
      WRIT_RUN_FROM: RUN_FROM,
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: cluster.url("read-write"),
      BUR_ADMIN_TOKEN: admin,
      SVC_LOG_SIGNING_SEED: randomBytes(32).toString("hex"),
      WRIT_CACHE_MAX_AGENTS: String(Math.max(10_000, CLUSTER_AGENTS)),
    };
    let seeded: Awaited<ReturnType<typeof seed>> | undefined;
    const runs: Record<string, { full: Measured; half: Measured; rate: number }> = {};
    for (const level of ["local", "remote_apply"] as const) {
      const started = await startChild([join(REPO, "bin/writ.mjs"), "serve"], { ...base, WRIT_SYNCHRONOUS_COMMIT: level }, "/readyz");
      serve = started.child;
      seeded ??= await seed(started.url, cluster.url(), admin, CLUSTER_AGENTS, { prefix: "cluster" });
      const agents = seeded.agents;
      const token = seeded.operatorKey;
      await untilAllowing(started.url, token, agents[0] as SeededAgent);
      await drive(started.url, token, agents, { amount: 1, maxRequests: agents.length, seconds: 120 });
      await drive(started.url, token, agents, { amount: 1, seconds: 3 });
      const full = await measured(serve.pid, () => drive(started.url, token, agents, { amount: 1, warmup: DRIVER_WARMUP }));
      expectOnly(`cluster ALLOW path (${level})`, full, "ALLOW");
      const rate = Math.max(1, Math.round(full.perSecond / 2));
      const half = await measured(serve.pid, () => drive(started.url, token, agents, { amount: 1, rate, warmup: DRIVER_WARMUP }));
      expectOnly(`cluster ALLOW path at half load (${level})`, half, "ALLOW");
      runs[level] = { full, half, rate };
      await stopChild(serve);
      serve = undefined;
    }
    const local = runs.local as { full: Measured; half: Measured; rate: number };
    const remote = runs.remote_apply as { full: Measured; half: Measured; rate: number };
    console.log(line(`(b) verify, ALLOW path, single Postgres`, single));
    console.log(line(`(L) ALLOW, 2-node cluster, commit local`, local.full));
    console.log(line(`(R) ALLOW, 2-node cluster, remote_apply`, remote.full));
    console.log(line(`(b) at half load (${fmt(singleHalfRate)} req/s)`, singleHalf));
    console.log(line(`(L) at half load (${fmt(local.rate)} req/s)`, local.half));
    console.log(line(`(R) at half load (${fmt(remote.rate)} req/s)`, remote.half));
    console.log("");
    console.log(
      `R/b = ${fmt(remote.full.perSecond / single.perSecond, 2)}   (ALLOW req/s with a synchronous standby, remote_apply, over the single embedded Postgres)`,
    );
    console.log(
      `R/L = ${fmt(remote.full.perSecond / local.full.perSecond, 2)}   (the same cluster: waiting for the standby's apply over committing on the primary alone)`,
    );
    console.log(
      `p99 at half load: single ${fmt(singleHalf.p99, 2)} ms, cluster local ${fmt(local.half.p99, 2)} ms, cluster remote_apply ${fmt(remote.half.p99, 2)} ms`,
    );
    console.log(await checkLedgers(cluster.nodeUrl(standby), seeded?.agents ?? []).then((t) => `on the standby ${standby.name}: ${t}`));
  } finally {
    await stopChild(serve);
    await cluster?.stop();
  }
}

/**
 * BENCH_PERF=1: starts `perf record -g` of the backends each node has now (the pools are warm:
 * the closed loop's backends); resolves to a function that stops it (SIGINT, by its pid) and
 * prints each file.
 */
async function perfRecord(prefix: string, nodes: readonly CitusNode[]): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), `writ-bench-${prefix}-perf-`));
  const procs = nodes.flatMap((n) => {
    const pids = n.postmaster?.pid === undefined ? [] : childPids(n.postmaster.pid);
    if (pids.length === 0) return [];
    const file = join(dir, `${n.name}.data`);
    const child = spawn("perf", ["record", "-g", "-F", "499", "-o", file, "-p", pids.join(",")], { stdio: "ignore" });
    const exited = new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.once("error", () => resolve());
    });
    return [{ child, file, exited }];
  });
  return async () => {
    for (const { child, file, exited } of procs) {
      child.kill("SIGINT");
      await exited;
      console.log(`  ${prefix} perf: ${file}`);
    }
  };
}

/** A `writ serve` on one cluster, seeded and warmed, ready for `allowRound` (see `allowSide`). */
interface AllowSide {
  readonly cluster: CitusCluster;
  readonly prefix: string;
  readonly nodes: readonly CitusNode[];
  readonly serve: { pid?: number };
  readonly url: string;
  readonly token: string;
  readonly agents: readonly SeededAgent[];
  /** Closed-loop rounds so far, with each node's CPU seconds and WAL bytes and the two-phase commits during them. */
  readonly rounds: Measured[];
  readonly nodeCpu: number[];
  readonly nodeWal: bigint[];
  twoPhase: number | null;
  stopPerf?: () => Promise<void>;
  stop(): Promise<void>;
}

/** Starts `writ serve` on `cluster`, seeds CLUSTER_AGENTS agents, warms every agent's snapshot and settles the database. */
async function allowSide(cluster: CitusCluster, prefix: string, extraEnv: Record<string, string> = {}): Promise<AllowSide> {
  const nodes = [cluster.coordinator, ...cluster.workers];
  const admin = randomBytes(24).toString("base64url");
  const env = {
    WRIT_RUN_FROM: RUN_FROM,
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: cluster.url(),
    BUR_ADMIN_TOKEN: admin,
    SVC_LOG_SIGNING_SEED: randomBytes(32).toString("hex"),
    WRIT_CACHE_MAX_AGENTS: String(Math.max(10_000, CLUSTER_AGENTS)),
    // Snapshots outlive the run, as in (b): the warm-up reads every agent's at once, so with the
    // default lifetime (60 s) they would all expire together inside a measured loop, each
    // agent's next verify reading it again (through the coordinator on Citus): a burst of cold
    // reads ten times the steady rate, in some runs and not others.
    WRIT_CACHE_TTL_MS: String(SNAPSHOT_TTL_MS),
    // No retention pass: its first runs a minute after start, inside the measured loops, and on
    // Citus its deletes span every shard (a two-phase commit each), which the line below would
    // count as ALLOWs' (docs/scale.md). A pass every ten minutes is not part of an ALLOW's cost.
    WRIT_RETENTION_INTERVAL_MS: "0",
    ...passedSettings(),
    // WRIT_CITUS_DIRECT=off compares the spends through the coordinator (docs/scale.md).
    ...(process.env.WRIT_CITUS_DIRECT ? { WRIT_CITUS_DIRECT: process.env.WRIT_CITUS_DIRECT } : {}),
    ...extraEnv,
  };
  // BENCH_PROFILE=1: each (P) and (C) writ serve writes a CPU profile too.
  const prof = PROFILE ? [`--cpu-prof`, `--cpu-prof-dir=${await mkdtemp(join(tmpdir(), `writ-bench-${prefix}-prof-`))}`] : [];
  if (PROFILE) console.log(`  ${prefix} writ serve profile: ${prof[1]?.slice("--cpu-prof-dir=".length) ?? ""}`);
  const started = await startChild([...prof, join(REPO, "bin/writ.mjs"), "serve"], env, "/readyz");
  const serve = started.child;
  try {
    const seeded = await seed(started.url, cluster.url(), admin, CLUSTER_AGENTS, { prefix });
    const agents = seeded.agents;
    const token = seeded.operatorKey;
    await untilAllowing(started.url, token, agents[0] as SeededAgent);
    await drive(started.url, token, agents, { amount: 1, maxRequests: agents.length, seconds: 120 });
    await drive(started.url, token, agents, { amount: 1, seconds: 3 });
    await settlePostgres(cluster.url());
    // The extension is created on the coordinator (Citus creates it on the workers too).
    if (STATEMENTS > 0) await cluster.withClient((k) => k.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"));
    if (STATEMENTS > 0) for (const n of nodes) await cluster.withClient((k) => k.query("SELECT pg_stat_statements_reset()"), n);
    return {
      cluster,
      prefix,
      nodes,
      serve,
      url: started.url,
      token,
      agents,
      rounds: [],
      nodeCpu: nodes.map(() => 0),
      nodeWal: nodes.map(() => 0n),
      twoPhase: 0,
      stop: () => stopChild(serve),
    };
  } catch (e) {
    await stopChild(serve);
    throw e;
  }
}

/** One closed-loop round of `seconds` on `side`, adding its requests and every node's CPU and WAL bytes to the side's. */
async function allowRound(side: AllowSide, seconds: number): Promise<Measured> {
  const { cluster, nodes } = side;
  const wal = () =>
    Promise.all(
      nodes.map((n) =>
        cluster.withClient(
          async (k) => BigInt((await k.query<{ l: string }>("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::text AS l")).rows[0]?.l ?? "0"),
          n,
        ),
      ),
    );
  const cpu = () => Promise.all(nodes.map((n) => treeCpuSeconds(n.postmaster?.pid)));
  // Two-phase commits (Citus keeps each in pg_dist_transaction; its recovery is off on the bench cluster).
  const twoPhase = () =>
    cluster.withClient(async (k) => {
      const { rows } = await k.query<{ t: string | null }>("SELECT to_regclass('pg_catalog.pg_dist_transaction')::text AS t");
      if (!rows[0]?.t) return null;
      return (await k.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_dist_transaction")).rows[0]?.n ?? null;
    });
  if (PERF && !side.stopPerf) side.stopPerf = await perfRecord(side.prefix, nodes);
  pgPid = cluster.coordinator.postmaster?.pid;
  try {
    const [w0, c0, t0] = [await wal(), await cpu(), await twoPhase()];
    const run = await measured(side.serve.pid, () => drive(side.url, side.token, side.agents, { amount: 1, seconds, warmup: DRIVER_WARMUP, latencies: true }));
    const [w1, c1, t1] = [await wal(), await cpu(), await twoPhase()];
    expectOnly(`ALLOW path (${side.prefix})`, run, "ALLOW");
    nodes.forEach((_, i) => {
      side.nodeCpu[i] = (side.nodeCpu[i] ?? 0) + ((c1[i] ?? 0) - (c0[i] ?? 0));
      side.nodeWal[i] = (side.nodeWal[i] ?? 0n) + ((w1[i] as bigint) - (w0[i] as bigint));
    });
    side.twoPhase = t0 !== null && t1 !== null && side.twoPhase !== null ? side.twoPhase + (t1 - t0) : null;
    side.rounds.push(run);
    return run;
  } finally {
    pgPid = undefined;
  }
}

/** After the rounds: the open loop at half the pooled closed loop's rate, the per-node lines, the ledgers' check; stops the side's writ serve. */
async function allowFinish(side: AllowSide): Promise<{ full: Measured; half: Measured; rate: number; perNode: string[]; ledgers: string }> {
  const { cluster, nodes, prefix } = side;
  try {
    await side.stopPerf?.();
    const full = pooled(side.rounds);
    const statements = STATEMENTS > 0 ? await topStatements(cluster, nodes, prefix, full.requests) : [];
    const rate = Math.max(1, Math.round(full.perSecond / 2));
    pgPid = cluster.coordinator.postmaster?.pid;
    const half = await measured(side.serve.pid, () => drive(side.url, side.token, side.agents, { amount: 1, rate, warmup: DRIVER_WARMUP }));
    expectOnly(`ALLOW path at half load (${prefix})`, half, "ALLOW");
    const perNode = nodes.map(
      (n, i) =>
        `  ${prefix} ${n.name.padEnd(12)} per ALLOW: CPU ${fmt(((side.nodeCpu[i] ?? 0) * 1e6) / Math.max(1, full.requests))} us, WAL ${fmt(Number(side.nodeWal[i] ?? 0n) / Math.max(1, full.requests))} bytes`,
    );
    if (side.twoPhase !== null)
      perNode.push(
        `  ${prefix} two-phase commits during the closed loop: ${side.twoPhase} (over ${full.requests} ALLOWs: each one a one-worker transaction when 0)`,
      );
    perNode.push(...statements);
    return { full, half, rate, perNode, ledgers: await checkLedgers(cluster.url(), side.agents) };
  } finally {
    pgPid = undefined;
    await side.stop();
  }
}

/** One ALLOW-path measurement on `cluster` alone (closed loop, then open loop at half its rate), with every node's CPU and WAL bytes per ALLOW. */
async function allowOn(cluster: CitusCluster, prefix: string, extraEnv: Record<string, string> = {}): Promise<Awaited<ReturnType<typeof allowFinish>>> {
  const side = await allowSide(cluster, prefix, extraEnv);
  try {
    await allowRound(side, SECONDS);
  } catch (e) {
    await side.stop();
    throw e;
  }
  return allowFinish(side);
}

/** BENCH_STATEMENTS: the settings that load pg_stat_statements (with the libraries `preload`) on a node, or none. */
function statementSettings(preload: string): Record<string, string | number> {
  return STATEMENTS > 0
    ? { shared_preload_libraries: preload, "pg_stat_statements.track": "all", "pg_stat_statements.track_planning": "on", "pg_stat_statements.max": 1000 }
    : {};
}

type StatementRow = { calls: string; plans: string; plan: number; exec: number; q: string };

/** BENCH_STATEMENTS: one node's costliest statements since pg_stat_statements was reset, per ALLOW, as printed lines. */
async function statementLines(
  query: (sql: string, values: unknown[]) => Promise<{ rows: StatementRow[] }>,
  name: string,
  prefix: string,
  allows: number,
): Promise<string[]> {
  const { rows } = await query(
    // One line per statement whatever shard it names (a shard's table or function: name_<shard id>).
    `SELECT sum(calls)::text AS calls, sum(plans)::text AS plans, sum(total_plan_time) AS plan, sum(total_exec_time) AS exec, q FROM (
       SELECT calls, plans, total_plan_time, total_exec_time, regexp_replace(regexp_replace(query, '\\s+', ' ', 'g'), '_[0-9]{5,}(_[0-9a-f]{12})?', '_*', 'g') AS q
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())) x
     GROUP BY q ORDER BY ${process.env.BENCH_STATEMENTS_BY === "calls" ? "sum(calls)" : "sum(total_plan_time) + sum(total_exec_time)"} DESC LIMIT $1`,
    [STATEMENTS],
  );
  const out = [
    `  ${prefix} ${name}: its ${rows.length} costliest statements (pg_stat_statements, track = all; wall time, nested calls counted in their callers too): calls, plannings, plan + exec us per ALLOW, statement (_*: any shard)`,
  ];
  for (const r of rows)
    out.push(
      `    ${r.calls.padStart(7)} ${r.plans.padStart(7)}  ${fmt((r.plan * 1000) / Math.max(1, allows), 0).padStart(6)} + ${fmt((r.exec * 1000) / Math.max(1, allows), 0).padStart(6)}  ${r.q.slice(0, 150)}`,
    );
  return out;
}

type TableRow = { relname: string; ins: string; upd: string; hot: string; del: string };

/** BENCH_STATEMENTS: the rows each table took per ALLOW since pg_stat_reset (inserted, updated and of those HOT, deleted): where the writes go, and whether updates stay on their page. */
async function tableLines(query: (sql: string) => Promise<{ rows: TableRow[] }>, prefix: string, allows: number): Promise<string[]> {
  const read = () =>
    query(
      `SELECT relname, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot, n_tup_del::text AS del FROM pg_stat_user_tables
       WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY n_tup_ins + n_tup_upd + n_tup_del DESC`,
    );
  // A backend reports its counters at most once a second, and an idle one within 10 s
  // (PostgreSQL 15): read until two reads 2 s apart agree (at most 8 reads).
  let { rows } = await read();
  for (let n = 0; n < 8; n++) {
    await new Promise((r) => setTimeout(r, 2000));
    const next = (await read()).rows;
    const same = JSON.stringify(next) === JSON.stringify(rows);
    rows = next;
    if (same) break;
  }
  const per = (v: string) => fmt(Number(v) / Math.max(1, allows), 2).padStart(6);
  return [
    `  ${prefix} rows per ALLOW by table (pg_stat_user_tables): inserted, updated (of them HOT), deleted`,
    ...rows.map((r) => `    ${per(r.ins)} ${per(r.upd)} (${per(r.hot)}) ${per(r.del)}  ${r.relname}`),
  ];
}

/** BENCH_STATEMENTS: each node's costliest statements of the closed loop (pg_stat_statements, reset before it). */
async function topStatements(cluster: CitusCluster, nodes: readonly CitusNode[], prefix: string, allows: number): Promise<string[]> {
  const out: string[] = [];
  for (const n of nodes) out.push(...(await statementLines((q, v) => cluster.withClient((k) => k.query<StatementRow>(q, v), n), n.name, prefix, allows)));
  return out;
}

/** (P) and (C): the ALLOW path on PostgreSQL 15 alone and on a Citus coordinator with two workers (see the module comment). */
async function citusRuns(single: Measured | undefined, singleHalf: Measured | undefined, singleHalfRate: number | undefined): Promise<void> {
  const tools = provisionCitus();
  if (!tools) {
    console.log("\n(C) skipped: Citus is not installed and its source is not there (hack/citus/provision.sh, WRIT_CITUS_SOURCE)");
    return;
  }
  let plain: CitusCluster | undefined;
  let cluster: CitusCluster | undefined;
  try {
    const stats = statementSettings;
    plain = await startCitusCluster({ tools, plain: true, parameters: { ...PG_SETTINGS, ...stats("pg_stat_statements") } });
    const t0 = performance.now();
    cluster = await startCitusCluster({
      tools,
      workers: CITUS_WORKERS,
      parameters: { ...PG_SETTINGS, ...CITUS_SHARDS, "citus.recover_2pc_interval": -1, ...stats("citus,pg_stat_statements") },
    });
    console.log("");
    console.log(
      `Citus ${tools.citus} cluster up in ${fmt((performance.now() - t0) / 1000, 1)} s: coordinator 127.0.0.1:${cluster.coordinator.port}, workers ${cluster.workers.map((w) => `127.0.0.1:${w.port}`).join(", ")}, PostgreSQL 15, ${JSON.stringify(PG_SETTINGS)}`,
    );
    // (P) and (C) side by side, their closed loops in alternating rounds (P C C P P C C P), so
    // that the host's drift during the run weighs on both, as (a) and (c), (b) and (e) do.
    const pSide = await allowSide(plain, "pg15");
    const cSide = await allowSide(cluster, "citus").catch(async (e: unknown) => {
      await pSide.stop();
      throw e;
    });
    try {
      // Both warm again before the first round (each side's set-up left the other idle; the
      // second's settling wrote a checkpoint): a short unmeasured loop of each, (P) last as it goes first.
      for (const side of [cSide, pSide]) await drive(side.url, side.token, side.agents, { amount: 1, seconds: 2 });
      for (let round = 0; round < CITUS_ROUNDS; round++) {
        const order = round % 2 === 0 ? [pSide, cSide] : [cSide, pSide];
        for (const side of order) await allowRound(side, SECONDS / CITUS_ROUNDS);
      }
    } catch (e) {
      await pSide.stop();
      await cSide.stop();
      throw e;
    }
    const pRates = pSide.rounds.map((r) => r.perSecond);
    const cRates = cSide.rounds.map((r) => r.perSecond);
    const p = await allowFinish(pSide).catch(async (e: unknown) => {
      await cSide.stop();
      throw e;
    });
    const c = await allowFinish(cSide);
    await plain.stop();
    plain = undefined;
    // The same with verify_decisions partitioned by week (WRIT_CITUS_DECISION_PARTITIONS=week): what the
    // partitions cost per ALLOW (src/store/citus-partitions.ts). BENCH_CITUS_PARTITIONS=0 skips it.
    let weekly: Awaited<ReturnType<typeof allowOn>> | undefined;
    if (process.env.BENCH_CITUS_PARTITIONS !== "0") {
      await cluster.stop();
      cluster = await startCitusCluster({
        tools,
        workers: CITUS_WORKERS,
        parameters: { ...PG_SETTINGS, ...CITUS_SHARDS, "citus.recover_2pc_interval": -1, ...stats("citus,pg_stat_statements") },
      });
      weekly = await allowOn(cluster, "citus-by-week", { WRIT_CITUS_DECISION_PARTITIONS: "week" });
    }
    if (single) console.log(line("(b) verify, ALLOW path, single Postgres", single));
    console.log(line("(P) ALLOW, PostgreSQL 15 alone", p.full));
    console.log(line(`(C) ALLOW, Citus coordinator + ${CITUS_WORKERS} worker${CITUS_WORKERS === 1 ? "" : "s"}`, c.full));
    if (weekly) console.log(line("(C) the same, verify_decisions by week", weekly.full));
    if (singleHalf) console.log(line(`(b) at half load (${fmt(singleHalfRate ?? 0)} req/s)`, singleHalf));
    console.log(line(`(P) at half load (${fmt(p.rate)} req/s)`, p.half));
    console.log(line(`(C) at half load (${fmt(c.rate)} req/s)`, c.half));
    console.log("");
    const cp = c.full.perSecond / p.full.perSecond;
    console.log(
      `C/P = ${fmt(cp, 2)}   goal >= ${GOAL_CITUS_RATIO}: ${cp >= GOAL_CITUS_RATIO ? "met" : "NOT met"}   (ALLOW req/s on the Citus coordinator over PostgreSQL 15 alone, the same binaries)`,
    );
    console.log(
      `C/P round by round: ${pRates.map((r, i) => fmt((cRates[i] ?? 0) / r, 2)).join(", ")}   (P req/s ${pRates.map((r) => fmt(r)).join(", ")}; C req/s ${cRates.map((r) => fmt(r)).join(", ")}; closed loops in alternating rounds of ${fmt(SECONDS / CITUS_ROUNDS, 1)} s)`,
    );
    if (single) console.log(`C/b = ${fmt(c.full.perSecond / single.perSecond, 2)}   (over the single embedded Postgres)`);
    for (const l of [...p.perNode, ...c.perNode, ...(weekly?.perNode ?? [])]) console.log(l);
    console.log(
      `p99 at half load: ${singleHalf ? `single ${fmt(singleHalf.p99, 2)} ms, ` : ""}PostgreSQL 15 ${fmt(p.half.p99, 2)} ms, Citus ${fmt(c.half.p99, 2)} ms`,
    );
    console.log(
      `(the per-agent tables are distributed by agent_id: every ALLOW is a transaction on its agent's worker, ${process.env.WRIT_CITUS_DIRECT === "off" ? "routed by the coordinator (WRIT_CITUS_DIRECT=off)" : "its spend transaction sent to that worker by writ serve (WRIT_CITUS_DIRECT)"}: docs/scale.md)`,
    );
    console.log(`PostgreSQL 15: ${p.ledgers}`);
    console.log(`Citus: ${c.ledgers}`);
  } finally {
    await plain?.stop();
    await cluster?.stop();
  }
}

await main();
