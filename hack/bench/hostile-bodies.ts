/**
 * `npm run bench:hostile-bodies`: does an unauthenticated sender of hostile JSON bodies slow
 * another tenant's verify? Everything on 127.0.0.1, bounded in count and time, in one run.
 *
 * Set-up: its own embedded Postgres (temp folder), `writ serve` as a child process (the
 * TypeScript sources through tsx, WRIT_RUN_FROM=src) on a port picked here, BENCH_AGENTS (20)
 * agents with ample budgets (./verify/seed.ts).
 * Then verify p50/p90 of one caller (sequential requests on one keep-alive connection from this
 * process, BENCH_VERIFIES (300) of them, each a fresh action_id) is measured twice in the same
 * run: (A) alone, and (H) while BENCH_SENDERS (6) hostile senders in a separate process
 * (./hostile/senders.ts) post to `/demo/check`: 1 MiB of nested arrays with its length, the same
 * streamed chunked, and the costliest body the bounds admit. The hostile run is bounded by
 * BENCH_HOSTILE_SECONDS (60) and 100,000 requests. Printed: both lines, the ratio H/A of the
 * p50s, what the senders got back, and the goal: H's p50 under 20 ms.
 * Every child is stopped by its pid; the cluster is stopped and its folder removed at the end.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../src/dev/free-port.js";
import { newPassword, startPostgres, type RunningPostgres } from "../../src/dev/postgres.js";
import { migrate } from "../../src/store/migrate.js";
import { quantile } from "./stats.js";
import { seed, type SeededAgent } from "./verify/seed.js";

const AGENTS = Number(process.env.BENCH_AGENTS ?? 20);
const VERIFIES = Number(process.env.BENCH_VERIFIES ?? 300);
const SENDERS = Number(process.env.BENCH_SENDERS ?? 6);
const HOSTILE_SECONDS = Number(process.env.BENCH_HOSTILE_SECONDS ?? 60);
const GOAL_P50_MS = 20;
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const SENDERS_SCRIPT = fileURLToPath(new URL("./hostile/senders.ts", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((r) => child.once("exit", r));
  process.kill(child.pid, "SIGTERM");
  const timer = setTimeout(() => child.pid !== undefined && process.kill(child.pid, "SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let n = 0;
/** One verify; its latency in ms. */
function verifyOnce(url: string, token: string, a: SeededAgent): Promise<number> {
  const body = JSON.stringify({
    agent_id: a.agentId,
    action: {
      action_id: `hostile-${process.pid}-${++n}`,
      action_type: "purchase",
      amount: 1,
      currency: "USD",
      proposed_at: new Date().toISOString(),
      merchant: "m-bench",
    },
  });
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/verify`,
      { method: "POST", agent, headers: { "content-type": "application/json", authorization: `Bearer ${token}`, "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`verify answered ${res.statusCode}`))));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function measure(url: string, token: string, agents: readonly SeededAgent[]): Promise<{ p50: number; p90: number; max: number }> {
  const ms: number[] = [];
  for (let i = 0; i < VERIFIES; i++) ms.push(await verifyOnce(url, token, agents[i % agents.length] as SeededAgent));
  ms.sort((x, y) => x - y);
  return { p50: quantile(ms, 0.5), p90: quantile(ms, 0.9), max: ms.at(-1) ?? 0 };
}

const line = (name: string, r: { p50: number; p90: number; max: number }) =>
  console.log(`${name.padEnd(34)} verify p50 ${r.p50.toFixed(2)} ms  p90 ${r.p90.toFixed(2)} ms  max ${r.max.toFixed(1)} ms  (${VERIFIES} sequential)`);

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "writ-bench-hostile-"));
  let pg: RunningPostgres | undefined;
  let serve: ChildProcess | undefined;
  let senders: ChildProcess | undefined;
  try {
    pg = await startPostgres({ dataDir, port: await freePort(), password: newPassword() });
    const dbUrl = pg.url("postgres");
    await migrate(dbUrl);
    const admin = randomBytes(24).toString("base64url");
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    serve = spawn(process.execPath, [join(REPO, "bin/writ.mjs"), "serve"], {
      cwd: REPO,
      env: {
        WRIT_RUN_FROM: "src",
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: dbUrl,
        BUR_ADMIN_TOKEN: admin,
        SVC_LOG_SIGNING_SEED: randomBytes(32).toString("hex"),
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    for (let i = 0; ; i++) {
      if (serve.exitCode !== null || i > 600) throw new Error("writ serve did not become ready");
      if (
        await fetch(`${url}/readyz`).then(
          (r) => r.status < 500,
          () => false,
        )
      )
        break;
      await sleep(100);
    }
    const seeded = await seed(url, dbUrl, admin, AGENTS, { prefix: "hostile" });
    // Warm-up: every agent's snapshot, and the code paths.
    for (let i = 0; i < Math.max(AGENTS, 50); i++) await verifyOnce(url, seeded.operatorKey, seeded.agents[i % AGENTS] as SeededAgent);
    const alone = await measure(url, seeded.operatorKey, seeded.agents);
    line("(A) alone", alone);

    senders = spawn(process.execPath, ["--import", "tsx", SENDERS_SCRIPT, url, String(SENDERS), String(HOSTILE_SECONDS), "100000"], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    senders.stdout?.on("data", (b: Buffer) => (out += b.toString("utf8")));
    const done = new Promise((r) => senders?.once("exit", r));
    await sleep(2000); // the senders are up and sending
    const hostile = await measure(url, seeded.operatorKey, seeded.agents);
    line(`(H) with ${SENDERS} hostile senders`, hostile);
    await stopChild(senders);
    await done;
    const ratio = hostile.p50 / alone.p50;
    console.log(`H/A p50 ratio ${ratio.toFixed(2)}; hostile senders (stopped at the end of H): ${out || "stopped before printing"}`);
    console.log(`goal: (H) p50 < ${GOAL_P50_MS} ms: ${hostile.p50 < GOAL_P50_MS ? "met" : "NOT met"}`);
  } finally {
    agent.destroy();
    await stopChild(senders);
    await stopChild(serve);
    await pg?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
