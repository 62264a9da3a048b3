/**
 * A real Kubernetes API server for tests: etcd + kube-apiserver 1.20 started as child processes
 * on free 127.0.0.1 ports, every file in one fresh temp folder, plus kubectl and helm bound to it.
 *
 * Binaries come from `hack/envtest/provision.sh` (cached outside the repo, see `envtestDir`);
 * `ensureEnvtest` runs it. Every process is started here and stopped by its own pid (SIGTERM,
 * then SIGKILL after a timeout); `stop()` removes the temp folder. Processes still alive when
 * the test process exits are killed then.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { freePort } from "../../src/dev/free-port.js";

const PROVISION = fileURLToPath(new URL("../../hack/envtest/provision.sh", import.meta.url));
const BINARIES = ["etcd", "kube-apiserver", "kubectl", "helm"] as const;
const LOG_TAIL = 64 * 1024;

/** What a kubectl/helm run produced. `code` is null when it was killed (timeout). */
export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of `Envtest.kubectl` / `Envtest.helm`. */
export interface CommandOptions {
  /** Written to the command's stdin (e.g. a manifest for `apply -f -`). */
  input?: string;
  /** Extra environment (KUBECONFIG and HOME are set by the helper). */
  env?: Record<string, string>;
  /** Kill the command after this long (default 60 s). */
  timeoutMs?: number;
}

/** Options of `startEnvtest`. */
export interface EnvtestOptions {
  /** Folder holding etcd, kube-apiserver, kubectl, helm (default: `envtestDir()/bin`). */
  binDir?: string;
  /** Longest wait for `/readyz` (default 60 s). */
  readyTimeoutMs?: number;
  /** Wait between SIGTERM and SIGKILL when stopping a process (default 10 s). */
  stopTimeoutMs?: number;
  /** Appended to the kube-apiserver command line. */
  apiServerFlags?: string[];
  /**
   * More static tokens (kube-apiserver's --token-auth-file): a test can act as a service account
   * (`system:serviceaccount:<ns>:<name>`, groups `system:serviceaccounts`, ...) without the
   * token controller envtest does not run.
   */
  tokens?: { token: string; user: string; groups: string[] }[];
}

/** A running API server and the tools bound to it. */
export interface Envtest {
  readonly kubeconfigPath: string;
  /** `https://127.0.0.1:PORT` */
  readonly server: string;
  /** Bearer token of `admin` (group system:masters). */
  readonly token: string;
  readonly binDir: string;
  kubectl(args: string[], opts?: CommandOptions): Promise<CommandResult>;
  helm(args: string[], opts?: CommandOptions): Promise<CommandResult>;
  /** Stops kube-apiserver and starts it again on the same port and etcd; resolves when ready. */
  restartApiServer(): Promise<void>;
  /** Stops kube-apiserver (by its pid; etcd and the data stay). */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again on the same port, etcd and data; resolves when ready. */
  startApiServer(): Promise<void>;
  /** Process ids of etcd and kube-apiserver (undefined when not running), for CPU accounting. */
  pids(): { etcd: number | undefined; apiServer: number | undefined };
  /** The last output of etcd and kube-apiserver, for failure messages. */
  logs(): string;
  /** Stops kube-apiserver, then etcd, and deletes the temp folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** The cache folder provision.sh fills: `$WRIT_ENVTEST_DIR` or `~/.cache/writ/envtest`. */
export function envtestDir(): string {
  return process.env.WRIT_ENVTEST_DIR?.trim() || join(homedir(), ".cache", "writ", "envtest");
}

/** Runs hack/envtest/provision.sh (fast when cached), streaming its output to stderr; returns the bin folder. */
export async function ensureEnvtest(): Promise<string> {
  const dir = envtestDir();
  const child = spawn("bash", [PROVISION], {
    env: { ...process.env, WRIT_ENVTEST_DIR: dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let tail = "";
  const onData = (b: Buffer) => {
    process.stderr.write(b);
    tail = (tail + b.toString("utf8")).slice(-8192);
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (c) => resolve(c));
  });
  if (code !== 0) throw new Error(`hack/envtest/provision.sh failed (exit ${code}):\n${tail}`);
  return join(dir, "bin");
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Processes started here and not yet exited, and temp folders not yet removed: cleaned up if the test process exits first. */
const live = new Set<number>();
const tempDirs = new Set<string>();
process.once("exit", () => {
  for (const pid of live) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // best effort: a killed process may still hold it for a moment
    }
  }
});

interface Proc {
  readonly name: string;
  readonly pid: number;
  /** Resolves with a description of how it ended. */
  readonly exited: Promise<string>;
  hasExited(): boolean;
  output(): string;
  stop(timeoutMs: number): Promise<void>;
}

function startProc(name: string, bin: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(bin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${bin}`);
  live.add(pid);
  let out = "";
  const onData = (b: Buffer) => (out = (out + b.toString("utf8")).slice(-LOG_TAIL));
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  let ended: string | null = null;
  const exited = new Promise<string>((resolve) => {
    child.once("error", (e) => resolve((ended = `failed to start: ${e.message}`)));
    child.once("exit", (code, signal) => {
      live.delete(pid);
      resolve((ended = signal ? `killed by ${signal}` : `exit code ${code}`));
    });
  });
  return {
    name,
    pid,
    exited,
    hasExited: () => ended !== null,
    output: () => out,
    async stop(timeoutMs) {
      if (ended !== null) return;
      process.kill(pid, "SIGTERM");
      const timer = setTimeout(() => {
        if (ended === null) process.kill(pid, "SIGKILL");
      }, timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** GET over https without verifying the (self-signed) certificate; resolves to status and body. */
function getInsecure(url: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` }, timeout: 5000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

/** Waits until `probe` is true, failing early if `proc` exits; when it gives up, stops `proc` (SIGKILL after `stopMs`) before throwing. */
async function waitFor(proc: Proc, what: string, timeoutMs: number, stopMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.hasExited()) throw new Error(`${proc.name} ${await proc.exited} before ${what}:\n${proc.output()}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) {
      await proc.stop(stopMs);
      throw new Error(`${proc.name}: no ${what} within ${timeoutMs} ms:\n${proc.output()}`);
    }
    await delay(150);
  }
}

/** Longest wait of one readiness probe: a port taken by another process may accept and never answer. */
const PROBE_TIMEOUT_MS = 2000;
/** Attempts of `onFreePorts` before the last error is thrown. */
const PORT_ATTEMPTS = 5;

/**
 * Runs `start` with `n` ports free when picked; when it fails because another process bound one
 * of them first ("address already in use" in the failed process's output), runs it again on new
 * ports. `attempt` counts from 0 (for names that must differ per attempt, such as a data folder).
 */
async function onFreePorts(n: number, start: (ports: number[], attempt: number) => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const ports: number[] = [];
    for (let i = 0; i < n; i++) ports.push(await freePort());
    try {
      await start(ports, attempt);
      return;
    } catch (e) {
      if (attempt + 1 >= PORT_ATTEMPTS || !/address already in use/i.test(e instanceof Error ? e.message : String(e))) throw e;
    }
  }
}

function run(bin: string, args: string[], env: Record<string, string>, opts: CommandOptions): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: { ...env, ...opts.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on("error", () => {}); // the command may exit without reading its input
    child.stdin.end(opts.input ?? "");
  });
}

/** Starts etcd and kube-apiserver on free ports in a fresh temp folder and waits for `/readyz`. */
export async function startEnvtest(opts: EnvtestOptions = {}): Promise<Envtest> {
  const binDir = opts.binDir ?? join(envtestDir(), "bin");
  for (const b of BINARIES) {
    if (!existsSync(join(binDir, b))) throw new Error(`${join(binDir, b)} is missing: run ensureEnvtest() (hack/envtest/provision.sh)`);
  }
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 10_000;
  const dir = await mkdtemp(join(tmpdir(), "writ-envtest-"));
  tempDirs.add(dir);
  const home = join(dir, "home");
  await mkdir(home);
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home };
  let etcd: Proc | null = null;
  let apiServer: Proc | null = null;
  const stopAll = async () => {
    await apiServer?.stop(stopTimeoutMs);
    await etcd?.stop(stopTimeoutMs);
    await rm(dir, { recursive: true, force: true });
    tempDirs.delete(dir);
  };

  try {
    let etcdUrl = "";
    await onFreePorts(2, async ([etcdPort, peerPort], attempt) => {
      etcdUrl = `http://127.0.0.1:${etcdPort}`;
      const peerUrl = `http://127.0.0.1:${peerPort}`;
      etcd = startProc(
        "etcd",
        join(binDir, "etcd"),
        [
          `--data-dir=${join(dir, `etcd-${attempt}`)}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=${peerUrl}`,
          `--initial-advertise-peer-urls=${peerUrl}`,
          `--initial-cluster=default=${peerUrl}`,
        ],
        env,
      );
      await waitFor(
        etcd,
        "healthy /health",
        readyTimeoutMs,
        stopTimeoutMs,
        async () => (await fetch(`${etcdUrl}/health`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })).ok,
      );
    });

    const token = randomBytes(24).toString("hex");
    const [saKey, saPub, tokens] = [join(dir, "sa.key"), join(dir, "sa.pub"), join(dir, "tokens.csv")];
    await run("openssl", ["genrsa", "-out", saKey, "2048"], env, {}).then(mustSucceed("openssl genrsa"));
    await run("openssl", ["rsa", "-in", saKey, "-pubout", "-out", saPub], env, {}).then(mustSucceed("openssl rsa"));
    const extra = (opts.tokens ?? []).map((t) => `${t.token},${t.user},${t.user},"${t.groups.join(",")}"\n`).join("");
    await writeFile(tokens, `${token},admin,admin,system:masters\n${extra}`, { mode: 0o600 });
    let port = 0;
    const apiArgs = () => [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${join(dir, "certs")}`,
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      `--service-account-key-file=${saPub}`,
      `--service-account-signing-key-file=${saKey}`,
      "--service-account-issuer=https://kubernetes.default.svc",
      `--token-auth-file=${tokens}`,
      "--authorization-mode=RBAC",
      "--service-cluster-ip-range=10.0.0.0/24",
      ...(opts.apiServerFlags ?? []),
    ];
    const startApiServer = async () => {
      apiServer = startProc("kube-apiserver", join(binDir, "kube-apiserver"), apiArgs(), env);
      await waitFor(apiServer, "ok from /readyz", readyTimeoutMs, stopTimeoutMs, async () => {
        const r = await getInsecure(`https://127.0.0.1:${port}/readyz`, token);
        return r.status === 200 && r.body === "ok";
      });
    };
    await onFreePorts(1, async (ports) => {
      port = ports[0] ?? 0;
      await startApiServer();
    });
    const server = `https://127.0.0.1:${port}`;

    const kubeconfigPath = join(dir, "kubeconfig");
    await writeFile(kubeconfigPath, stringify(kubeconfig(server, token)), { mode: 0o600 });
    const toolEnv = { ...env, KUBECONFIG: kubeconfigPath };
    let stopped = false;
    return {
      kubeconfigPath,
      server,
      token,
      binDir,
      kubectl: (args, o = {}) => run(join(binDir, "kubectl"), args, toolEnv, o),
      helm: (args, o = {}) => run(join(binDir, "helm"), args, toolEnv, o),
      async restartApiServer() {
        await apiServer?.stop(stopTimeoutMs);
        await startApiServer();
      },
      async stopApiServer() {
        await apiServer?.stop(stopTimeoutMs);
      },
      async startApiServer() {
        if (apiServer && !apiServer.hasExited()) return;
        await startApiServer();
      },
      pids: () => ({ etcd: etcd && !etcd.hasExited() ? etcd.pid : undefined, apiServer: apiServer && !apiServer.hasExited() ? apiServer.pid : undefined }),
      logs: () => `--- etcd ---\n${etcd?.output() ?? ""}\n--- kube-apiserver ---\n${apiServer?.output() ?? ""}`,
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopAll();
      },
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

function mustSucceed(what: string) {
  return (r: CommandResult) => {
    if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}): ${r.stderr}`);
  };
}

/** A kubeconfig (YAML text) for `server` authenticating with `token` (the server's certificate is not checked). */
export function kubeconfigFor(server: string, token: string): string {
  return stringify(kubeconfig(server, token));
}

function kubeconfig(server: string, token: string) {
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "envtest", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: "admin", user: { token } }],
    contexts: [{ name: "envtest", context: { cluster: "envtest", user: "admin", namespace: "default" } }],
    "current-context": "envtest",
  };
}
