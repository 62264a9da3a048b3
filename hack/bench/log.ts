/**
 * `npm run bench:log`: the transparency log under load, everything on 127.0.0.1.
 *
 * 1. Starts its own embedded Postgres (temp folder, Postgres' default durability) and builds a
 *    1,000,000-entry log through `appendToLog` in batches of 5,000 (timed).
 * 2. Starts `writ serve` as a child process. Inclusion proof latency over HTTP for random
 *    entries of the settled 1M log, from a separate process (this file in `--proofs` mode):
 *    p50/p99 against the latest head and against a given `?tree_size` with one connection, and
 *    against the latest head with eight.
 * 3. Drives `POST /v1/log/entries` from a SEPARATE process (the autocannon CLI), bounded in
 *    time and connections; every append answers a signed head. Reported: appends/s, latency,
 *    appends per signed head; then checks the new head is signed and consistent with the 1M one.
 * 4. Baseline in the same run: plain single-row INSERTs of rows of the same shape into a copy
 *    of the entries table of the same Postgres, from as many connections as autocannon used,
 *    for the same time; and the ratio appends/s : inserts/s.
 *
 * Every child is stopped by its pid; the cluster is stopped and its folder removed at the end.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { hashBytes, sha256, type HashString } from "../../src/core/canonical/index.js";
import { signerFromSeed } from "../../src/core/jose/index.js";
import { verifyConsistency, verifyInclusion, verifyTreeHead, type TreeHead } from "../../src/core/tlog/index.js";
import { freePort } from "../../src/dev/free-port.js";
import { newPassword, startPostgres, type RunningPostgres } from "../../src/dev/postgres.js";
import { migrate } from "../../src/store/migrate.js";
import { appendToLog, type LogAppendInput } from "../../src/store/log.js";
import { createPool } from "../../src/store/pool.js";

const LOG_SIZE = Number(process.env.BENCH_LOG_SIZE ?? 1_000_000);
const BUILD_BATCH = 5_000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PROOF_REQUESTS = 5_000;
const GOAL_APPENDS = 1_500;
const GOAL_PROOF_P99_MS = 5;
const ORIGIN = "bench.writ.local/log";
/** Settings beyond Postgres' defaults: room for the baseline's connections, a production-sized cache. */
const PG_SETTINGS = { max_connections: "200", shared_buffers: "512MB" };
const SELF = fileURLToPath(import.meta.url);
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const AUTOCANNON = createRequire(import.meta.url).resolve("autocannon");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
const buf = (h: string) => hashBytes(h as HashString);
const APPEND_BODY = { agreement_id: "agr_bench", reason: "bench", at: "2026-01-02T03:04:05Z" };

function body(n: number): Record<string, unknown> {
  return { agreement_id: `agr_${n}`, mandate_hash: `sha256:${sha256(String(n)).toString("hex")}`, at: "2026-01-02T03:04:05Z", n };
}

/** Runs a child to completion and returns its stdout (throws on a non-zero exit). */
function runChild(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: REPO, env, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${args[0]} exited with ${code}`))));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((r) => child.once("exit", r));
  process.kill(child.pid, "SIGTERM");
  const timer = setTimeout(() => child.pid !== undefined && process.kill(child.pid, "SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

async function buildLog(url: string, seed: string): Promise<void> {
  const pool = createPool(url, { max: 2 });
  const signer = signerFromSeed(seed);
  const started = performance.now();
  try {
    for (let done = 0; done < LOG_SIZE; done += BUILD_BATCH) {
      const n = Math.min(BUILD_BATCH, LOG_SIZE - done);
      const batch: LogAppendInput[] = Array.from({ length: n }, (_, i) => ({ kind: "agreement", body: body(done + i) }));
      await appendToLog(pool, batch, signer, { origin: ORIGIN });
      if ((done + n) % 200_000 === 0) console.log(`  ... ${fmt(done + n)} entries, ${fmt((performance.now() - started) / 1000, 1)} s`);
    }
  } finally {
    await pool.end();
  }
  const s = (performance.now() - started) / 1000;
  console.log(`built a ${fmt(LOG_SIZE)}-entry log in ${fmt(s, 1)} s (${fmt(LOG_SIZE / s)} entries/s, batches of ${fmt(BUILD_BATCH)})`);
}

async function startServe(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(REPO, "bin/writ.mjs"), "serve"], {
    cwd: REPO,
    env: { ...env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "error" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error("writ serve exited during start-up");
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { child, url };
    await sleep(100);
  }
  await stopChild(child);
  throw new Error("writ serve did not become ready");
}

interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
  "2xx": number;
  duration: number;
}

async function autocannon(url: string, token: string, seconds: number): Promise<CannonResult> {
  const out = await runChild([
    AUTOCANNON,
    ...["-c", String(CONNECTIONS), "-d", String(seconds), "-m", "POST", "-j", "-n"],
    ...["-H", "content-type=application/json", "-H", `authorization=Bearer ${token}`],
    // One body for every request (autocannon's [<id>] replacement sends a wrong Content-Length);
    // the entries still differ, by sequence and hash links.
    ...["-b", JSON.stringify({ kind: "incident", body: APPEND_BODY })],
    `${url}/v1/log/entries`,
  ]);
  return JSON.parse(out) as CannonResult;
}

async function countRows(url: string): Promise<{ entries: number; heads: number }> {
  const pool = createPool(url, { max: 1 });
  try {
    const { rows } = await pool.query<{ e: string; h: string }>("SELECT (SELECT max(sequence) FROM log_entries) AS e, (SELECT count(*) FROM log_heads) AS h");
    return { entries: Number(rows[0]?.e), heads: Number(rows[0]?.h) };
  } finally {
    await pool.end();
  }
}

async function analyze(url: string): Promise<void> {
  const pool = createPool(url, { max: 1 });
  try {
    await pool.query("VACUUM ANALYZE log_entries, log_nodes, log_heads");
    await pool.query("CHECKPOINT");
  } finally {
    await pool.end();
  }
}

/** Plain autocommitted single-row INSERTs from CONNECTIONS connections for `seconds`. */
async function baseline(url: string, seconds: number): Promise<number> {
  const pool = createPool(url, { max: CONNECTIONS });
  try {
    await pool.query("CREATE TABLE bench_plain_entries (LIKE log_entries INCLUDING ALL)");
    let next = 1;
    let done = 0;
    const until = performance.now() + seconds * 1000;
    const prev = randomBytes(32);
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        const client = await pool.connect();
        try {
          while (performance.now() < until) {
            const seq = next++;
            await client.query({
              name: "bench_plain_insert",
              text: "INSERT INTO bench_plain_entries (sequence, kind, body, entry_hash, prev_entry_hash) VALUES ($1, $2, $3, $4, $5)",
              values: [seq, "incident", JSON.stringify(APPEND_BODY), randomBytes(32), seq === 1 ? null : prev],
            });
            done++;
          }
        } finally {
          client.release();
        }
      }),
    );
    return done / seconds;
  } finally {
    await pool.end();
  }
}

/**
 * `--proofs URL SIZE COUNT CONCURRENCY SIZED`: GETs proofs of random entries (against the latest
 * head, or with SIZED=1 against `?tree_size=` of that head), verifies the first 50 and prints
 * the latencies as JSON.
 */
async function proofDriver(url: string, size: number, count: number, concurrency: number, sized: boolean): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const get = (path: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      http
        .get(`${url}${path}`, { agent }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        })
        .on("error", reject);
    });
  const head = JSON.parse((await get("/v1/log/head")).text) as TreeHead;
  const latencies: number[] = [];
  let verified = 0;
  const worker = async (n: number, record: boolean) => {
    for (let i = 0; i < n; i++) {
      const seq = 1 + Math.floor(Math.random() * size);
      const t = performance.now();
      const r = await get(`/v1/log/entries/${seq}/proof${sized ? `?tree_size=${head.tree_size}` : ""}`);
      const ms = performance.now() - t;
      if (r.status !== 200) throw new Error(`proof ${seq}: ${r.status} ${r.text}`);
      if (record) latencies.push(ms);
      if (record && verified < 50) {
        const p = JSON.parse(r.text) as { leaf: string; proof: { hash: string }[] };
        verifyInclusion(
          buf(p.leaf),
          seq - 1,
          head.tree_size,
          p.proof.map((x) => buf(x.hash)),
          buf(head.root),
        );
        verified++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker(100, false)));
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => worker(Math.ceil(count / concurrency), true)));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] as number;
  agent.destroy();
  console.log(JSON.stringify({ n: latencies.length, p50: at(0.5), p99: at(0.99), max: at(1), perSecond: latencies.length / seconds, verified }));
}

async function measureProofs(url: string, size: number, concurrency: number, sized = false) {
  const args = [url, String(size), String(PROOF_REQUESTS), String(concurrency), sized ? "1" : "0"];
  const out = await runChild(["--import", "tsx", SELF, "--proofs", ...args]);
  return JSON.parse(out) as { n: number; p50: number; p99: number; max: number; perSecond: number; verified: number };
}

async function main(): Promise<void> {
  const loadAtStart = loadavg()[0] ?? 0;
  const dataDir = await mkdtemp(join(tmpdir(), "writ-bench-log-"));
  let pg: RunningPostgres | undefined;
  let serve: ChildProcess | undefined;
  try {
    pg = await startPostgres({ dataDir, port: await freePort(), password: newPassword(), serverSettings: PG_SETTINGS });
    const url = pg.url("postgres");
    await migrate(url);
    const seed = randomBytes(32).toString("hex");
    const token = randomBytes(24).toString("base64url");
    console.log(`Postgres on 127.0.0.1:${pg.port}: default durability (fsync, synchronous_commit on), ${JSON.stringify(PG_SETTINGS)}`);
    await buildLog(url, seed);
    // What autovacuum and the checkpointer do shortly after a bulk load.
    await analyze(url);

    const started = await startServe({
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: url,
      SVC_APPEND_TOKEN: token,
      SVC_LOG_SIGNING_SEED: seed,
      WRIT_LOG_ORIGIN: ORIGIN,
    });
    serve = started.child;
    console.log(`writ serve pid ${serve.pid} at ${started.url}; load from separate processes`);

    // Reads first, on the settled 1M log (no checkpoint or autovacuum of the write phase running).
    const proofRuns = [
      { what: "1 connection, latest head", p: await measureProofs(started.url, LOG_SIZE, 1) },
      { what: "1 connection, ?tree_size=<head size>", p: await measureProofs(started.url, LOG_SIZE, 1, true) },
      { what: "8 connections, latest head", p: await measureProofs(started.url, LOG_SIZE, 8) },
    ];

    const before = await countRows(url);
    await autocannon(started.url, token, 2); // warm-up
    const mid = await countRows(url);
    const run = await autocannon(started.url, token, SECONDS);
    const after = await countRows(url);
    const appendsPerSecond = run["2xx"] / SECONDS;
    const perHead = (after.entries - mid.entries) / Math.max(1, after.heads - mid.heads);
    if (run.non2xx > 0 || run.errors > 0) console.log(`  !! ${run.non2xx} non-2xx answers, ${run.errors} errors`);

    const plain = await baseline(url, SECONDS);

    // The log is still one consistent log: verify the head against the build's last head.
    const key = signerFromSeed(seed).publicJwk;
    const head = await verifyTreeHead(await (await fetch(`${started.url}/v1/log/head`)).json(), key);
    const old = (await (await fetch(`${started.url}/v1/log/entries/${LOG_SIZE}/proof?tree_size=${LOG_SIZE}`)).json()) as { root: string };
    const cons = (await (await fetch(`${started.url}/v1/log/consistency?first=${LOG_SIZE}&second=${head.tree_size}`)).json()) as { proof: string[] };
    verifyConsistency(LOG_SIZE, head.tree_size, cons.proof.map(buf), buf(old.root), buf(head.root));

    const ok = (pass: boolean) => (pass ? "MET" : "NOT MET");
    console.log("");
    console.log(
      `load average (1 min) of the machine: ${fmt(loadAtStart, 2)} before the bench, ${fmt(loadavg()[0] ?? 0, 2)} at its end, ${cpus().length} cores`,
    );
    console.log(`appends over HTTP (autocannon, ${CONNECTIONS} connections, ${SECONDS} s, every answer a signed head)`);
    console.log(`  ${fmt(appendsPerSecond)} appends/s   goal >= ${fmt(GOAL_APPENDS)}: ${ok(appendsPerSecond >= GOAL_APPENDS)}`);
    console.log(`  latency p50 ${run.latency.p50} ms, p99 ${run.latency.p99} ms; ${fmt(perHead, 1)} appends per signed head; ${run.non2xx} non-2xx`);
    console.log(
      `  warm-up appended ${fmt(mid.entries - before.entries)}; log now ${fmt(head.tree_size)} entries, head verified and consistent with ${fmt(LOG_SIZE)}`,
    );
    console.log(`baseline: plain single-row INSERTs, same rows, same Postgres, ${CONNECTIONS} connections, ${SECONDS} s`);
    console.log(`  ${fmt(plain)} inserts/s`);
    console.log(`  ratio appends/s : inserts/s = ${fmt(appendsPerSecond / plain, 2)}`);
    for (const { what, p } of proofRuns) {
      console.log(`inclusion proofs over HTTP, random entries of ${fmt(LOG_SIZE)}, ${what}, ${fmt(p.n)} requests`);
      console.log(
        `  p50 ${fmt(p.p50, 2)} ms, p99 ${fmt(p.p99, 2)} ms, max ${fmt(p.max, 2)} ms, ${fmt(p.perSecond)}/s; ${p.verified} verified   ` +
          `goal p99 <= ${GOAL_PROOF_P99_MS} ms: ${ok(p.p99 <= GOAL_PROOF_P99_MS)}`,
      );
    }
  } finally {
    if (serve) await stopChild(serve);
    await pg?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
if (args[0] === "--proofs") {
  await proofDriver(args[1] as string, Number(args[2]), Number(args[3]), Number(args[4]), args[5] === "1");
} else {
  await main();
}
