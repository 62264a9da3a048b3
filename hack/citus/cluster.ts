/**
 * A real Citus cluster on 127.0.0.1 for the Citus tests and the benchmark: a coordinator and
 * (by default) two workers, each a Debian PostgreSQL 15 postmaster with
 * `shared_preload_libraries = 'citus'`, in data directories made by Debian's `initdb` in a temp
 * folder. Citus itself is built into that PostgreSQL by ./provision.sh when it is missing.
 *
 * - Every port is picked here (free ports on 127.0.0.1); every postmaster is a child of this
 *   process, stopped by its pid (SIGINT: PostgreSQL's fast shutdown; SIGKILL past a bound).
 * - Postgres refuses to run as root: when this process is root, initdb and the postmasters run
 *   as the `postgres` system user (spawn's uid/gid), in a temp folder chowned to it.
 * - Authentication: scram-sha-256 on 127.0.0.1 with a random password; the coordinator reaches
 *   the workers with it through a pgpass file (PGPASSFILE in the postmasters' environment,
 *   which libpq in Citus's backends reads).
 * - `start` creates the database on every node, `CREATE EXTENSION citus` in it on every node,
 *   registers the coordinator (`citus_set_coordinator_host`) and adds each worker
 *   (`citus_add_node`). `url()` is the coordinator's URL: the one an application is given.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile, chown } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { freePort } from "../../src/dev/free-port.js";

const PROVISION = fileURLToPath(new URL("./provision.sh", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What ./provision.sh found. */
export interface CitusTools {
  citus: string;
  pgBin: string;
  pgUser: string;
}

/**
 * Runs ./provision.sh (apt-installs the build packages and builds Citus when missing; instant
 * when installed). Null when Citus is not installed and its source is not there (exit 3): the
 * one case in which the Citus tests skip. Any other failure throws.
 */
export function provisionCitus(): CitusTools | null {
  let out: string;
  try {
    out = execFileSync("bash", [PROVISION], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 30 * 60_000 });
  } catch (e) {
    const err = e as { status?: number; stdout?: string };
    if (err.status === 3 && /^citus=missing$/m.test(err.stdout ?? "")) return null;
    throw e;
  }
  const v = (k: string) => {
    const m = new RegExp(`^${k}=(.+)$`, "m").exec(out);
    if (!m?.[1]) throw new Error(`hack/citus/provision.sh printed no ${k}=:\n${out}`);
    return m[1];
  };
  return { citus: v("citus"), pgBin: v("pg_bin"), pgUser: v("pg_user") };
}

/** One node of the cluster. */
export interface CitusNode {
  readonly name: string;
  readonly role: "coordinator" | "worker";
  readonly port: number;
  readonly dataDir: string;
  /** The postmaster (null while stopped). */
  postmaster: ChildProcess | null;
  /** Everything its postmaster wrote. */
  output(): string;
}

/** A running cluster (see the module comment). */
export interface CitusCluster {
  readonly coordinator: CitusNode;
  readonly workers: readonly CitusNode[];
  readonly password: string;
  /** The application database's name. */
  readonly database: string;
  /** The coordinator's URL (of `database`, or another database of it). */
  url(database?: string): string;
  /** A URL of one node. */
  nodeUrl(node: CitusNode, database?: string): string;
  /** Runs `fn` with a client connected to a node (default the coordinator). */
  withClient<T>(fn: (c: pg.Client) => Promise<T>, node?: CitusNode, database?: string): Promise<T>;
  /** Stops one node's postmaster by its pid (fast shutdown; SIGKILL with `kill`). */
  stopNode(node: CitusNode, opts?: { kill?: boolean }): Promise<void>;
  /** Starts a stopped node again on its port and data directory, waiting until it answers. */
  startNode(node: CitusNode): Promise<void>;
  /** Stops every postmaster (by pid) and removes the folder. */
  stop(): Promise<void>;
}

/** Options of `startCitusCluster`. */
export interface CitusClusterOptions {
  /** Workers (default 2). */
  workers?: number;
  /** Extra PostgreSQL parameters of every node (e.g. `{ "citus.shard_count": 8, fsync: "off" }`). */
  parameters?: Record<string, string | number>;
  /** The application database (default "writ"). */
  database?: string;
  /** Longest wait for one node to answer (default 60 s). */
  startTimeoutMs?: number;
  /** Called with progress lines. */
  log?: (line: string) => void;
  /** Tools from `provisionCitus` (run here when not given). */
  tools?: CitusTools;
  /**
   * A plain PostgreSQL 15 of the same binaries instead, for comparisons: the coordinator alone
   * (`workers` ignored), without Citus loaded or the extension created.
   */
  plain?: boolean;
}

function run(cmd: string, args: string[], opts: { uid?: number; gid?: number; env: NodeJS.ProcessEnv }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: opts.env,
      ...(opts.uid !== undefined && opts.gid !== undefined ? { uid: opts.uid, gid: opts.gid } : {}),
    });
    let out = "";
    child.stdout?.on("data", (b: Buffer) => (out += b.toString("utf8")));
    child.stderr?.on("data", (b: Buffer) => (out += b.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}:\n${out}`))));
  });
}

async function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** Starts the nodes, creates the database with the extension on each, and joins the workers. */
export async function startCitusCluster(opts: CitusClusterOptions = {}): Promise<CitusCluster> {
  const log = opts.log ?? (() => {});
  const tools = opts.tools ?? provisionCitus();
  if (!tools) throw new Error("Citus is not installed and its source is not there (hack/citus/provision.sh)");
  const root = await mkdtemp(join(tmpdir(), "writ-citus-"));
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot ? Number(execFileSync("id", ["-u", tools.pgUser], { encoding: "utf8" }).trim()) : undefined;
  const gid = asRoot ? Number(execFileSync("id", ["-g", tools.pgUser], { encoding: "utf8" }).trim()) : undefined;
  const ids = uid !== undefined && gid !== undefined ? { uid, gid } : {};
  const password = randomBytes(18).toString("base64url");
  const database = opts.database ?? "writ";
  const pgpass = join(root, "pgpass");
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, LANG: "C.UTF-8", LC_ALL: "C.UTF-8", PGPASSFILE: pgpass, TZ: "UTC" };
  const startTimeoutMs = opts.startTimeoutMs ?? 60_000;
  const nodes: CitusNode[] = [];
  const outputs = new Map<CitusNode, string>();

  const nodeUrl = (node: CitusNode, db = database) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${node.port}/${db}`;
  const withClient = async <T>(fn: (c: pg.Client) => Promise<T>, node: CitusNode = nodes[0] as CitusNode, db = database): Promise<T> => {
    const c = new pg.Client({ connectionString: nodeUrl(node, db), connectionTimeoutMillis: 5000 });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end().catch(() => {});
    }
  };

  const params = (node: CitusNode): string[] =>
    Object.entries({
      port: node.port,
      listen_addresses: "127.0.0.1",
      unix_socket_directories: join(root, node.name),
      max_connections: 200,
      // The cluster is a test fixture: no telemetry call home (the machines reach no such host).
      ...(opts.plain ? {} : { shared_preload_libraries: "citus", "citus.enable_statistics_collection": "off" }),
      ...opts.parameters,
    }).flatMap(([k, v]) => ["-c", `${k}=${String(v)}`]);

  const startNode = async (node: CitusNode) => {
    const child = spawn(join(tools.pgBin, "postgres"), ["-D", node.dataDir, ...params(node)], { stdio: ["ignore", "pipe", "pipe"], env, ...ids });
    const add = (b: Buffer) => outputs.set(node, ((outputs.get(node) ?? "") + b.toString("utf8")).slice(-100_000));
    child.stdout?.on("data", add);
    child.stderr?.on("data", add);
    node.postmaster = child;
    const deadline = Date.now() + startTimeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${node.name}: postgres exited during start-up:\n${outputs.get(node) ?? ""}`);
      try {
        await withClient(async (c) => c.query("SELECT 1"), node, "postgres");
        return;
      } catch {
        // not accepting connections yet
      }
      if (Date.now() > deadline) throw new Error(`${node.name}: postgres did not answer within the bound:\n${outputs.get(node) ?? ""}`);
      await sleep(100);
    }
  };

  const stopNode = async (node: CitusNode, o: { kill?: boolean } = {}) => {
    const p = node.postmaster;
    node.postmaster = null;
    if (!p?.pid || p.exitCode !== null || p.signalCode !== null) return;
    process.kill(p.pid, o.kill ? "SIGKILL" : "SIGINT");
    if (!(await waitExit(p, 30_000))) {
      process.kill(p.pid, "SIGKILL");
      await waitExit(p, 10_000);
    }
  };

  const cluster: CitusCluster = {
    get coordinator() {
      return nodes[0] as CitusNode;
    },
    get workers() {
      return nodes.slice(1);
    },
    password,
    database,
    url: (db = database) => nodeUrl(nodes[0] as CitusNode, db),
    nodeUrl,
    withClient,
    stopNode,
    startNode: async (node) => {
      if (node.postmaster) return;
      await startNode(node);
    },
    async stop() {
      await Promise.all(nodes.map((n) => stopNode(n)));
      await rm(root, { recursive: true, force: true });
    },
  };

  try {
    const pwfile = join(root, "pwfile");
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    await writeFile(pgpass, `127.0.0.1:*:*:postgres:${password.replace(/[\\:]/g, "\\$&")}\n`, { mode: 0o600 });
    if (uid !== undefined && gid !== undefined) for (const f of [root, pwfile, pgpass]) await chown(f, uid, gid);
    const count = opts.plain ? 0 : (opts.workers ?? 2);
    for (let i = 0; i <= count; i++) {
      const name = i === 0 ? "coordinator" : `worker${i}`;
      const dir = join(root, name);
      await mkdir(dir, { mode: 0o700 });
      if (uid !== undefined && gid !== undefined) await chown(dir, uid, gid);
      const node: CitusNode = {
        name,
        role: i === 0 ? "coordinator" : "worker",
        port: await freePort(),
        dataDir: join(dir, "data"),
        postmaster: null,
        output: () => outputs.get(node) ?? "",
      };
      nodes.push(node);
    }
    // initdb of the nodes side by side (each takes a few seconds).
    await Promise.all(
      nodes.map((n) =>
        run(
          join(tools.pgBin, "initdb"),
          [
            "-D",
            n.dataDir,
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            `--pwfile=${pwfile}`,
            "--no-sync",
          ],
          { ...ids, env },
        ),
      ),
    );
    await Promise.all(nodes.map((n) => startNode(n)));
    for (const n of nodes) log(`${n.name}: postgres pid ${n.postmaster?.pid} on 127.0.0.1:${n.port}`);
    await Promise.all(
      nodes.map(async (n) => {
        await withClient((c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(database)}`), n, "postgres");
        if (!opts.plain) await withClient((c) => c.query("CREATE EXTENSION citus"), n);
      }),
    );
    if (!opts.plain)
      await withClient(async (c) => {
        await c.query("SELECT citus_set_coordinator_host('127.0.0.1', $1)", [cluster.coordinator.port]);
        for (const w of cluster.workers) await c.query("SELECT citus_add_node('127.0.0.1', $1)", [w.port]);
      });
    log(`citus: coordinator 127.0.0.1:${cluster.coordinator.port}, workers ${cluster.workers.map((w) => w.port).join(", ")}`);
    return cluster;
  } catch (e) {
    await cluster.stop().catch(() => {});
    throw e;
  }
}
