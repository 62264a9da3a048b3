/**
 * `writ serve` as a child process, for tests of the real executable (start-up, signals,
 * restarts). Runs `node bin/writ.mjs serve` in the checkout (the sources through tsx, see
 * bin/writ.mjs) or in another folder (`root`: a production install) with exactly the given
 * environment (plus PATH, HOME and TMPDIR), HOST 127.0.0.1 and the port the test chose, and
 * waits until `/healthz` answers.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../src/dev/free-port.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** How a child process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running `writ serve` child. */
export interface ServeProcess {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Sends `signal` (default SIGTERM) to the pid and waits for the exit (SIGKILL after `timeoutMs`). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

/** Options of `startServeProcess`. */
export interface ServeProcessOptions {
  /** Environment of the child (settings); PORT/HOST are set by the helper. */
  env?: Record<string, string>;
  /** Port to serve on (default: a free one). */
  port?: number;
  /** Longest wait for /healthz (default 30 s). */
  readyTimeoutMs?: number;
  /** The folder holding bin/writ.mjs, also the working directory (default: this checkout). */
  root?: string;
  /** Time between two /healthz tries (default 100 ms; a start-up benchmark uses less). */
  pollIntervalMs?: number;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Spawns `writ serve` and waits until it answers /healthz. */
export async function startServeProcess(opts: ServeProcessOptions = {}): Promise<ServeProcess> {
  const port = opts.port ?? (await freePort());
  const env: Record<string, string> = { LOG_LEVEL: "info", WRIT_OUTBOUND_ALLOW_LOOPBACK: "1", ...opts.env, PORT: String(port), HOST: "127.0.0.1" };
  for (const k of ["PATH", "HOME", "TMPDIR"]) {
    const v = process.env[k];
    if (v !== undefined && env[k] === undefined) env[k] = v;
  }
  const root = opts.root ?? REPO;
  const child = spawn(process.execPath, [join(root, "bin", "writ.mjs"), "serve"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (b: Buffer) => (out += b.toString("utf8")));
  child.stderr?.on("data", (b: Buffer) => (out += b.toString("utf8")));
  const exited = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let done: Exit | null = null;
  void exited.then((e) => (done = e));
  const url = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (done) throw new Error(`writ serve exited during start-up (${JSON.stringify(done)}):\n${out}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`writ serve did not answer /healthz in time:\n${out}`);
    }
    await delay(opts.pollIntervalMs ?? 100);
  }

  const pid = child.pid as number;
  return {
    url,
    port,
    pid,
    child,
    exited,
    output: () => out,
    async stop(signal = "SIGTERM", timeoutMs = 15_000) {
      if (done) return done;
      process.kill(pid, signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const e = await exited;
      clearTimeout(timer);
      return e;
    },
  };
}
