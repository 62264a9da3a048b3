/**
 * `writ controller` as a child process for e2e tests (bin/writ.mjs, the sources through tsx):
 * started on a free 127.0.0.1 port with a kubeconfig and a database, ready once `/readyz`
 * answers 200; stopped by its own pid (SIGTERM, or the signal given, then SIGKILL after 15 s).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "../../src/dev/free-port.js";

const BIN = fileURLToPath(new URL("../../bin/writ.mjs", import.meta.url));
const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** A running `writ controller`. */
export interface ControllerProcess {
  readonly pid: number;
  /** The health/metrics server. */
  readonly url: string;
  output(): string;
  exited(): boolean;
  /** Sends `signal` (default SIGTERM), SIGKILL after 15 s; resolves once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Options of `startControllerProcess`. */
export interface ControllerProcessOptions {
  kubeconfigPath: string;
  databaseUrl: string;
  podName: string;
  /** Leader election Lease in namespace default (default writ-controller); null: no election. */
  lease?: string | null;
  /** Extra environment (overrides the defaults). */
  env?: Record<string, string>;
  /** Longest wait for /readyz (default 60 s). */
  readyTimeoutMs?: number;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the controller and waits until it is ready (see the module comment). */
export async function startControllerProcess(opts: ControllerProcessOptions): Promise<ControllerProcess> {
  const port = await freePort();
  const lease = opts.lease === undefined ? "writ-controller" : opts.lease;
  const child: ChildProcess = spawn(process.execPath, [BIN, "controller"], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      KUBECONFIG: opts.kubeconfigPath,
      DATABASE_URL: opts.databaseUrl,
      SVC_LOG_SIGNING_SEED: "11".repeat(32),
      HOST: "127.0.0.1",
      PORT: String(port),
      POD_NAME: opts.podName,
      POD_NAMESPACE: "default",
      ...(lease !== null ? { WRIT_LEADER_ELECTION_LEASE: lease, WRIT_LEADER_ELECTION_NAMESPACE: "default" } : {}),
      WRIT_WATCH_NAMESPACES: "",
      LOG_LEVEL: "info",
      ...opts.env,
    },
  });
  let out = "";
  child.stdout?.on("data", (b: Buffer) => (out = (out + b.toString("utf8")).slice(-200_000)));
  child.stderr?.on("data", (b: Buffer) => (out = (out + b.toString("utf8")).slice(-200_000)));
  let ended = false;
  const exit = new Promise<void>((resolve) => child.once("exit", () => ((ended = true), resolve())));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (ended) throw new Error(`writ controller exited during start-up:\n${out}`);
    const r = await fetch(`${url}/readyz`).catch(() => undefined);
    if (r?.ok) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`writ controller not ready in time:\n${out}`);
    }
    await delay(200);
  }
  const pid = child.pid as number;
  return {
    pid,
    url,
    output: () => out,
    exited: () => ended,
    async stop(signal = "SIGTERM") {
      if (ended) return;
      process.kill(pid, signal);
      const t = setTimeout(() => !ended && process.kill(pid, "SIGKILL"), 15_000);
      await exit;
      clearTimeout(t);
    },
  };
}
