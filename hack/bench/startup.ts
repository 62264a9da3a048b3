/**
 * `npm run bench:startup`: what the compiled build saves over running the TypeScript sources
 * through tsx, measured in one run on one machine. Three ways of running bin/writ.mjs:
 *   - tsx, cold: the sources with tsx's cache off (TSX_DISABLE_CACHE=1): a new pod of the old
 *     image, whose /tmp (tsx's cache) was an empty emptyDir at every start;
 *   - tsx, warm: the sources with tsx's cache filled beforehand (a developer's machine);
 *   - compiled: dist/ from `npm run build` (WRIT_RUN_FROM=dist), what the image runs now.
 * For each: `writ --help` wall time; `writ serve` time from spawn until /readyz answers 200
 * against Postgres (an embedded cluster, the database migrated beforehand); and the server's
 * resident memory (VmRSS of it and any children) after IDLE_MS with no requests. Runs alternate
 * between the three, so a change in the machine's load hits each alike. Prints medians (and
 * min/max) and each figure's ratio to the compiled one.
 *
 * Then the module graph of each long-running program in dist/: the API server (`writ serve`,
 * dist/api/server.js) and the controller (`writ controller`, dist/controller/command.js), each
 * imported alone in a new node (./module-graph.mjs, loader hooks plus require.cache): how many
 * modules it loads (of dist/, of node_modules, and the packages with the most) and how long
 * the import takes: what start-up costs before any of the program runs.
 *
 * BENCH_HELP_RUNS (default 15), BENCH_SERVE_RUNS (default 5) and BENCH_GRAPH_RUNS (default 5)
 * set the counts (0 skips that part); BENCH_NO_BUILD=1 uses dist/ as it is instead of building it first.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../src/dev/free-port.js";
import { newPassword, startPostgres, type RunningPostgres } from "../../src/dev/postgres.js";
import { migrate } from "../../src/store/migrate.js";
import { startServeProcess } from "../../test/helpers/serve-process.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(REPO, "bin", "writ.mjs");
const HELP_RUNS = Number(process.env.BENCH_HELP_RUNS ?? 15);
const SERVE_RUNS = Number(process.env.BENCH_SERVE_RUNS ?? 5);
const GRAPH_RUNS = Number(process.env.BENCH_GRAPH_RUNS ?? 5);
const IDLE_MS = 2000;
/** The long-running programs whose module graphs are measured. */
const PROGRAMS: ReadonlyArray<readonly [string, string]> = [
  ["writ serve", "dist/api/server.js"],
  ["writ controller", "dist/controller/command.js"],
];

interface Way {
  name: string;
  env: Record<string, string>;
}

/** Total VmRSS in MiB of `pid` and its descendants (Linux /proc). */
async function treeRssMiB(pid: number): Promise<number> {
  let kb = 0;
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  kb += Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  for (const tid of tasks) {
    const children = (await readFile(`/proc/${pid}/task/${tid}/children`, "utf8").catch(() => "")).trim();
    for (const child of children ? children.split(/\s+/) : []) kb += (await treeRssMiB(Number(child))) * 1024;
  }
  return kb / 1024;
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

function helpOnce(way: Way): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [BIN, "--help"], {
    cwd: REPO,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...way.env },
  });
  const t = ms(t0);
  if (r.status !== 0) throw new Error(`${way.name}: writ --help exited ${r.status}: ${r.stderr}`);
  return t;
}

async function serveOnce(way: Way, databaseUrl: string): Promise<{ readyMs: number; rssMiB: number }> {
  const t0 = process.hrtime.bigint();
  const p = await startServeProcess({ env: { DATABASE_URL: databaseUrl, LOG_LEVEL: "warn", ...way.env }, pollIntervalMs: 5 });
  let figures: { readyMs: number; rssMiB: number };
  try {
    while (
      (await fetch(`${p.url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (ms(t0) > 60_000) throw new Error(`${way.name}: /readyz not 200 after 60 s:\n${p.output()}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const readyMs = ms(t0);
    // Measurement, not synchronisation: the figure wanted is the memory of a server left idle.
    await new Promise((r) => setTimeout(r, IDLE_MS));
    figures = { readyMs, rssMiB: await treeRssMiB(p.pid) };
  } catch (e) {
    await p.stop("SIGKILL");
    throw e;
  }
  const exit = await p.stop("SIGTERM");
  if (exit.code !== 0) throw new Error(`${way.name}: writ serve exited ${JSON.stringify(exit)}:\n${p.output()}`);
  return figures;
}

/** One import of `entry` (under REPO) in a new node: the modules it loaded and the import's wall time. */
async function graphOnce(entry: string, dir: string): Promise<{ files: string[]; ms: number }> {
  const list = join(dir, `graph-${Math.random().toString(36).slice(2)}`);
  const r = spawnSync(process.execPath, [join(REPO, "hack", "bench", "module-graph.mjs"), join(REPO, entry), list], { cwd: REPO, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`module graph of ${entry}: exited ${r.status}: ${r.stderr}`);
  return JSON.parse(await readFile(`${list}.json`, "utf8")) as { files: string[]; ms: number };
}

/** The package a node_modules path belongs to (scoped names whole). */
function packageOf(file: string): string {
  const parts = (file.split("/node_modules/").at(-1) ?? "").split("/");
  return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1] ?? ""}` : (parts[0] ?? "");
}

async function reportGraphs(dir: string): Promise<void> {
  console.log(`
module graph of each program, compiled (import alone; modules loaded; import ms median [min..max] of ${GRAPH_RUNS} runs)`);
  for (const [name, entry] of PROGRAMS) {
    const runs: Array<{ files: string[]; ms: number }> = [];
    for (let i = 0; i < GRAPH_RUNS; i++) runs.push(await graphOnce(entry, dir));
    const files = runs[0]?.files ?? [];
    const own = files.filter((f) => f.startsWith(join(REPO, "dist") + "/"));
    const deps = files.filter((f) => f.includes("/node_modules/"));
    const byPackage = new Map<string, number>();
    for (const f of deps) byPackage.set(packageOf(f), (byPackage.get(packageOf(f)) ?? 0) + 1);
    const top = [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 6);
    const times = runs.map((r) => r.ms);
    const range = `[${Math.min(...times).toFixed(0)}..${Math.max(...times).toFixed(0)}]`;
    console.log(
      `  ${name.padEnd(16)} ${String(files.length).padStart(5)} modules: ${own.length} of dist/, ${deps.length} of node_modules; import ${median(times).toFixed(0)} ms ${range}`,
    );
    console.log(`  ${"".padEnd(16)} most: ${top.map(([p, n]) => `${p} ${n}`).join(", ")}`);
  }
}

function report(title: string, unit: string, byWay: Map<string, number[]>, compiled: string): void {
  console.log(`\n${title} (${unit}; median [min..max] of ${[...byWay.values()][0]?.length} runs; ratio = median / compiled median)`);
  const base = median(byWay.get(compiled) ?? []);
  for (const [name, xs] of byWay) {
    const m = median(xs);
    const range = `[${Math.min(...xs).toFixed(0)}..${Math.max(...xs).toFixed(0)}]`;
    console.log(`  ${name.padEnd(10)} ${m.toFixed(0).padStart(6)} ${unit}  ${range.padEnd(14)} x${(m / base).toFixed(2)}`);
  }
}

if (process.env.BENCH_NO_BUILD !== "1") {
  const b = spawnSync(process.execPath, ["--import", "tsx", "hack/build/main.ts"], { cwd: REPO, stdio: "inherit" });
  if (b.status !== 0) throw new Error("npm run build failed");
}

const work = await mkdtemp(join(tmpdir(), "writ-bench-startup-"));
const dataDir = await mkdtemp(join(tmpdir(), "writ-bench-startup-pg-"));
const ways: Way[] = [
  { name: "tsx cold", env: { WRIT_RUN_FROM: "src", TSX_DISABLE_CACHE: "1" } },
  { name: "tsx warm", env: { WRIT_RUN_FROM: "src", TMPDIR: join(work, "tsx-cache") } },
  { name: "compiled", env: { WRIT_RUN_FROM: "dist" } },
];
let pg: RunningPostgres | undefined;
try {
  pg = await startPostgres({ dataDir, port: await freePort(), password: newPassword() });
  await pg.ensureDatabase("bench");
  const url = pg.url("bench");
  await migrate(url);

  console.log(`node ${process.version}, ${process.platform}/${process.arch}; warming up (fills tsx's cache for "tsx warm")`);
  for (const way of ways) {
    helpOnce(way);
    await serveOnce(way, url);
  }

  const help = new Map(ways.map((w) => [w.name, [] as number[]]));
  for (let i = 0; i < HELP_RUNS; i++) for (const way of ways) help.get(way.name)?.push(helpOnce(way));
  const ready = new Map(ways.map((w) => [w.name, [] as number[]]));
  const rss = new Map(ways.map((w) => [w.name, [] as number[]]));
  for (let i = 0; i < SERVE_RUNS; i++) {
    for (const way of ways) {
      const r = await serveOnce(way, url);
      ready.get(way.name)?.push(r.readyMs);
      rss.get(way.name)?.push(r.rssMiB);
    }
  }

  if (HELP_RUNS > 0) report("writ --help", "ms", help, "compiled");
  if (SERVE_RUNS > 0) {
    report("writ serve: spawn to /readyz 200", "ms", ready, "compiled");
    report(`writ serve: RSS after ${IDLE_MS / 1000} s idle`, "MiB", rss, "compiled");
  }
  if (GRAPH_RUNS > 0) await reportGraphs(work);
} finally {
  await pg?.stop();
  for (const d of [work, dataDir]) await rm(d, { recursive: true, force: true });
}
