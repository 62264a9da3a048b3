/**
 * A real replicated Postgres on 127.0.0.1 for the failover test and the benchmark: one etcd and
 * two (or more) Patroni nodes, each running Debian's PostgreSQL 15, in Patroni's synchronous
 * mode (the leader commits only after its synchronous standby has the WAL). Everything comes
 * from Debian's packages, installed by ./provision.sh when missing.
 *
 * - Every port is picked here (free ports on 127.0.0.1); every process is started by this
 *   module and stopped by its pid (etcd, each Patroni, and a postmaster Patroni left behind).
 * - Postgres refuses to run as root: when this process is root, Patroni (and so Postgres) runs
 *   as the `postgres` system user (spawn's uid/gid), in a temp folder chowned to it.
 * - Failover settings (bootstrap DCS config): ttl 10 s, loop_wait 1 s, retry_timeout 4 s, and
 *   `primary_start_timeout: 0`: a leader whose Postgres crashed does not try to restart it in
 *   place but hands over to the synchronous standby at once. `synchronous_mode: true`, not
 *   strict: with no standby left, the new leader commits alone (otherwise a two-node cluster
 *   could not write at all while one node is down).
 * - `url()` is a multi-host URL over every node, as Writ reads DATABASE_URL
 *   (src/store/cluster-url.ts); the Writ database is created by `start`.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, readFileSync } from "node:fs";
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
export interface PatroniTools {
  patroni: string;
  etcd: string;
  pgBin: string;
  pgUser: string;
}

/** Runs ./provision.sh (apt-installs what is missing; fast when everything is there). */
export function provisionPatroni(): PatroniTools {
  const out = execFileSync("bash", [PROVISION], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 15 * 60_000 });
  const v = (k: string) => {
    const m = new RegExp(`^${k}=(.+)$`, "m").exec(out);
    if (!m?.[1]) throw new Error(`hack/patroni/provision.sh printed no ${k}=:\n${out}`);
    return m[1];
  };
  return { patroni: v("patroni"), etcd: v("etcd"), pgBin: v("pg_bin"), pgUser: v("pg_user") };
}

/** One Patroni node. */
export interface PatroniNode {
  readonly name: string;
  readonly pgPort: number;
  readonly apiPort: number;
  readonly dataDir: string;
  /** The Patroni process (null once killed or stopped). */
  patroni: ChildProcess | null;
  /** Everything Patroni and its Postgres wrote. */
  output(): string;
}

/** A member as Patroni's REST API `GET /cluster` lists it. */
export interface ClusterMember {
  name: string;
  role: string;
  state: string;
  timeline?: number;
}

/** A running cluster (see the module comment). */
export interface PatroniCluster {
  readonly nodes: readonly PatroniNode[];
  readonly password: string;
  /** The Writ database's name. */
  readonly database: string;
  /** A multi-host URL over every node (`target_session_attrs` as given, default read-write). */
  url(targetSessionAttrs?: string): string;
  /** A URL of one node only. */
  nodeUrl(node: PatroniNode, database?: string): string;
  /** The members as the first answering node's Patroni sees them (null when none answers). */
  members(): Promise<ClusterMember[] | null>;
  /** The node whose Postgres is the running leader, waiting up to `timeoutMs`; `not` excludes one. */
  waitForLeader(opts?: { timeoutMs?: number; not?: PatroniNode }): Promise<PatroniNode>;
  /** Waits until a leader and a synchronous standby are both running. */
  waitForSyncStandby(timeoutMs?: number): Promise<{ leader: PatroniNode; standby: PatroniNode }>;
  /** The postmaster pid of a node (from its postmaster.pid), or null when none runs. */
  postmasterPid(node: PatroniNode): number | null;
  /** SIGKILLs the node's postmaster (its backends end when they see it gone). Returns its pid. */
  killPostgres(node: PatroniNode): number;
  /** SIGKILLs the node's Patroni. */
  killPatroni(node: PatroniNode): void;
  /** Stops every process (by pid) and removes the folder. */
  stop(): Promise<void>;
}

/** Options of `startPatroniCluster`. */
export interface PatroniClusterOptions {
  /** Nodes (default 2). */
  nodes?: number;
  /** Extra Postgres parameters of every node. */
  parameters?: Record<string, string | number>;
  /** Longest wait for the cluster to come up (default 180 s). */
  startTimeoutMs?: number;
  /** Called with progress lines. */
  log?: (line: string) => void;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
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

async function waitPidGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (pidAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

async function getJson(url: string): Promise<unknown> {
  const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return r.json();
}

function yamlConfig(o: {
  scope: string;
  name: string;
  apiPort: number;
  pgPort: number;
  etcdPort: number;
  dataDir: string;
  dir: string;
  pgBin: string;
  password: string;
  parameters: Record<string, string | number>;
}): string {
  const params = Object.entries({
    max_connections: 200,
    wal_level: "replica",
    hot_standby: "on",
    max_wal_senders: 10,
    max_replication_slots: 10,
    wal_log_hints: "on",
    ...o.parameters,
  })
    .map(([k, v]) => `        ${k}: ${JSON.stringify(String(v))}`)
    .join("\n");
  return `scope: ${o.scope}
name: ${o.name}
log:
  level: INFO
restapi:
  listen: 127.0.0.1:${o.apiPort}
  connect_address: 127.0.0.1:${o.apiPort}
etcd3:
  hosts: 127.0.0.1:${o.etcdPort}
  protocol: http
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: false
    primary_start_timeout: 0
    master_start_timeout: 0
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
${params}
  initdb:
    - encoding: UTF8
    - data-checksums
    - auth-host: scram-sha-256
    - auth-local: trust
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
postgresql:
  listen: 127.0.0.1:${o.pgPort}
  connect_address: 127.0.0.1:${o.pgPort}
  data_dir: ${o.dataDir}
  bin_dir: ${o.pgBin}
  pgpass: ${join(o.dir, "pgpass")}
  authentication:
    superuser:
      username: postgres
      password: ${o.password}
    replication:
      username: replicator
      password: ${o.password}
    rewind:
      username: postgres
      password: ${o.password}
  parameters:
    unix_socket_directories: ${JSON.stringify(o.dir)}
watchdog:
  mode: off
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
`;
}

/** Starts etcd and the Patroni nodes, waits for a leader with a synchronous standby, creates the database. */
export async function startPatroniCluster(opts: PatroniClusterOptions = {}): Promise<PatroniCluster> {
  const log = opts.log ?? (() => {});
  const tools = provisionPatroni();
  const root = await mkdtemp(join(tmpdir(), "writ-patroni-"));
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot ? Number(execFileSync("id", ["-u", tools.pgUser], { encoding: "utf8" }).trim()) : undefined;
  const gid = asRoot ? Number(execFileSync("id", ["-g", tools.pgUser], { encoding: "utf8" }).trim()) : undefined;
  const password = randomBytes(18).toString("base64url");
  const scope = `writ-${randomBytes(4).toString("hex")}`;
  const database = "writ";
  const children: ChildProcess[] = [];
  const nodes: PatroniNode[] = [];
  let etcd: ChildProcess | null = null;
  let etcdOut = "";

  const cluster: PatroniCluster = {
    nodes,
    password,
    database,
    url(attrs = "read-write") {
      return `postgres://postgres:${password}@${nodes.map((n) => `127.0.0.1:${n.pgPort}`).join(",")}/${database}?target_session_attrs=${attrs}`;
    },
    nodeUrl(node, db = database) {
      return `postgres://postgres:${password}@127.0.0.1:${node.pgPort}/${db}`;
    },
    async members() {
      for (const n of nodes) {
        try {
          const body = (await getJson(`http://127.0.0.1:${n.apiPort}/cluster`)) as { members?: ClusterMember[] };
          if (Array.isArray(body.members)) return body.members;
        } catch {
          // this node's Patroni does not answer: ask the next
        }
      }
      return null;
    },
    async waitForLeader(o = {}) {
      const deadline = Date.now() + (o.timeoutMs ?? 60_000);
      for (;;) {
        const members = await cluster.members();
        const leader = members?.find((m) => m.role === "leader" && m.state === "running" && m.name !== o.not?.name);
        const node = leader && nodes.find((n) => n.name === leader.name);
        if (node && (await isPrimary(node))) return node;
        if (Date.now() > deadline) throw new Error(`no running leader within the bound: ${JSON.stringify(members)}\n${tail()}`);
        await sleep(200);
      }
    },
    async waitForSyncStandby(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const members = await cluster.members();
        const l = members?.find((m) => m.role === "leader" && m.state === "running");
        const s = members?.find((m) => m.role === "sync_standby" && (m.state === "running" || m.state === "streaming"));
        const leader = l && nodes.find((n) => n.name === l.name);
        const standby = s && nodes.find((n) => n.name === s.name);
        if (leader && standby && (await syncNamesSet(leader))) return { leader, standby };
        if (Date.now() > deadline) throw new Error(`no leader with a synchronous standby within the bound: ${JSON.stringify(members)}\n${tail()}`);
        await sleep(200);
      }
    },
    postmasterPid(node) {
      const f = join(node.dataDir, "postmaster.pid");
      if (!existsSync(f)) return null;
      const pid = Number(readFileSync(f, "utf8").split("\n")[0]);
      return Number.isInteger(pid) && pid > 0 && pidAlive(pid) ? pid : null;
    },
    killPostgres(node) {
      const pid = cluster.postmasterPid(node);
      if (pid === null) throw new Error(`${node.name}: no postmaster runs`);
      process.kill(pid, "SIGKILL");
      return pid;
    },
    killPatroni(node) {
      const p = node.patroni;
      if (!p?.pid) throw new Error(`${node.name}: Patroni is not running`);
      process.kill(p.pid, "SIGKILL");
      node.patroni = null;
    },
    async stop() {
      // Patroni first (SIGTERM stops its Postgres cleanly), then any postmaster left behind
      // (a node whose Patroni was killed), then etcd; each by its pid.
      await Promise.all(
        nodes.map(async (n) => {
          const p = n.patroni;
          if (p?.pid && p.exitCode === null && p.signalCode === null) {
            process.kill(p.pid, "SIGTERM");
            if (!(await waitExit(p, 30_000)) && p.pid) process.kill(p.pid, "SIGKILL");
          }
          const pm = cluster.postmasterPid(n);
          if (pm !== null) {
            process.kill(pm, "SIGQUIT");
            if (!(await waitPidGone(pm, 10_000))) process.kill(pm, "SIGKILL");
          }
        }),
      );
      for (const c of children) if (c.pid && c.exitCode === null && c.signalCode === null && c !== etcd) process.kill(c.pid, "SIGKILL");
      if (etcd?.pid && etcd.exitCode === null && etcd.signalCode === null) {
        process.kill(etcd.pid, "SIGTERM");
        if (!(await waitExit(etcd, 10_000)) && etcd.pid) process.kill(etcd.pid, "SIGKILL");
      }
      await rm(root, { recursive: true, force: true });
    },
  };

  const tail = () => [`etcd: ${etcdOut.slice(-1500)}`, ...nodes.map((n) => `${n.name}: ${n.output().slice(-3000)}`)].join("\n");

  async function isPrimary(node: PatroniNode): Promise<boolean> {
    const c = new pg.Client({ connectionString: cluster.nodeUrl(node, "postgres"), connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      const { rows } = await c.query<{ r: boolean }>("SELECT pg_is_in_recovery() AS r");
      return rows[0]?.r === false;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => {});
    }
  }

  async function syncNamesSet(node: PatroniNode): Promise<boolean> {
    const c = new pg.Client({ connectionString: cluster.nodeUrl(node, "postgres"), connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      const { rows } = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_replication WHERE sync_state = 'sync' AND state = 'streaming'");
      return (rows[0]?.n ?? 0) > 0;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => {});
    }
  }

  try {
    if (uid !== undefined && gid !== undefined) await chown(root, uid, gid);
    const etcdPort = await freePort();
    const peerPort = await freePort();
    const etcdDir = join(root, "etcd");
    etcd = spawn(
      tools.etcd,
      [
        "--name",
        "writ-test",
        "--data-dir",
        etcdDir,
        "--listen-client-urls",
        `http://127.0.0.1:${etcdPort}`,
        "--advertise-client-urls",
        `http://127.0.0.1:${etcdPort}`,
        "--listen-peer-urls",
        `http://127.0.0.1:${peerPort}`,
        "--initial-advertise-peer-urls",
        `http://127.0.0.1:${peerPort}`,
        "--initial-cluster",
        `writ-test=http://127.0.0.1:${peerPort}`,
        "--listen-metrics-urls",
        "",
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ETCD_UNSUPPORTED_ARCH: process.arch === "x64" ? "" : process.arch },
      },
    );
    children.push(etcd);
    etcd.stdout?.on("data", (b: Buffer) => (etcdOut = (etcdOut + b.toString("utf8")).slice(-20_000)));
    etcd.stderr?.on("data", (b: Buffer) => (etcdOut = (etcdOut + b.toString("utf8")).slice(-20_000)));
    const etcdDeadline = Date.now() + 30_000;
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${etcdPort}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (etcd.exitCode !== null || Date.now() > etcdDeadline) throw new Error(`etcd did not start:\n${etcdOut}`);
      await sleep(100);
    }
    log(`etcd pid ${etcd.pid} on 127.0.0.1:${etcdPort}`);

    const count = opts.nodes ?? 2;
    for (let i = 0; i < count; i++) {
      const name = `node${i}`;
      const pgPort = await freePort();
      const apiPort = await freePort();
      const dir = join(root, name);
      const dataDir = join(dir, "data");
      await mkdir(dir, { mode: 0o700 });
      const config = join(dir, "patroni.yml");
      await writeFile(
        config,
        yamlConfig({ scope, name, apiPort, pgPort, etcdPort, dataDir, dir, pgBin: tools.pgBin, password, parameters: opts.parameters ?? {} }),
        { mode: 0o600 },
      );
      if (uid !== undefined && gid !== undefined) {
        for (const f of [dir, config]) chownSync(f, uid, gid);
      }
      let out = "";
      const node: PatroniNode = { name, pgPort, apiPort, dataDir, patroni: null, output: () => out };
      const start = () => {
        const child = spawn(tools.patroni, [config], {
          cwd: dir,
          stdio: ["ignore", "pipe", "pipe"],
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8", LC_ALL: "C.UTF-8", PGPASSFILE: join(dir, "pgpass") },
          ...(uid !== undefined && gid !== undefined ? { uid, gid } : {}),
        });
        const add = (b: Buffer) => (out = (out + b.toString("utf8")).slice(-200_000));
        child.stdout?.on("data", add);
        child.stderr?.on("data", add);
        children.push(child);
        node.patroni = child;
      };
      start();
      nodes.push(node);
      log(`${name}: Patroni pid ${node.patroni?.pid}, Postgres on 127.0.0.1:${pgPort}, REST on 127.0.0.1:${apiPort}`);
      // The first node bootstraps alone (initdb) before the others clone from it.
      if (i === 0) await cluster.waitForLeader({ timeoutMs: opts.startTimeoutMs ?? 180_000 });
    }
    const { leader, standby } = await cluster.waitForSyncStandby(opts.startTimeoutMs ?? 180_000);
    log(`leader ${leader.name}, synchronous standby ${standby.name}`);
    const admin = new pg.Client({ connectionString: cluster.nodeUrl(leader, "postgres") });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${database}`);
    } finally {
      await admin.end();
    }
    return cluster;
  } catch (e) {
    await cluster.stop().catch(() => {});
    throw e;
  }
}
