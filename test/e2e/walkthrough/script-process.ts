/**
 * Runs a shell script file the way a reader pastes it: `bash -x -e -u -o pipefail` in a folder, with
 * exactly the given environment, in its own process group (so the processes it starts with `&`
 * can be found again), killed when it runs past its time limit.
 *
 * `stopRecordedProcesses` stops what the script started by the pids it saved (`*.pid` files in
 * its folder): SIGTERM, then SIGKILL after a grace period; only pids still in the script's
 * process group are signalled (a pid that exited and was reused by another process is left
 * alone). Whatever of the group is still alive afterwards, or when the test process exits, is
 * SIGKILLed by the group id.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** How a script run ended. */
export interface ScriptResult {
  /** Exit status; null when killed. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** A started script. */
export interface ScriptProcess {
  /** The bash pid, which is also its process group id. */
  readonly pgid: number;
  readonly done: Promise<ScriptResult>;
}

const groups = new Set<number>();
process.once("exit", () => {
  for (const g of groups) killGroup(g, "SIGKILL");
});

function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // no process left in the group
  }
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the script file `path` under bash in `cwd` with `env`; kills the group after `timeoutMs`. */
export function startScript(path: string, opts: { cwd: string; env: Record<string, string>; timeoutMs: number }): ScriptProcess {
  const started = Date.now();
  const child = spawn("bash", ["-x", "-e", "-u", "-o", "pipefail", path], {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pgid = child.pid;
  if (pgid === undefined) throw new Error("could not start bash");
  groups.add(pgid);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(pgid, "SIGTERM");
    setTimeout(() => killGroup(pgid, "SIGKILL"), 5000).unref();
  }, opts.timeoutMs);
  const done = new Promise<ScriptResult>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, stdout, stderr, ms: Date.now() - started });
    });
  });
  return { pgid, done };
}

/** Process group and state of a live pid, or null when it is gone (or a zombie). */
function procStat(pid: number): { pgrp: number; state: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // after "pid (comm) "
    const state = rest[0] ?? "";
    if (state === "Z" || state === "X") return null;
    return { pgrp: Number(rest[2]), state };
  } catch {
    return null;
  }
}

/** The pids in `dir/*.pid`, by file name. */
export function recordedPids(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of readdirSync(dir)) {
    if (!f.endsWith(".pid")) continue;
    const pid = Number(readFileSync(join(dir, f), "utf8").trim());
    if (Number.isSafeInteger(pid) && pid > 1) out[f] = pid;
  }
  return out;
}

/**
 * Stops every process whose pid the script saved in `dir` (SIGTERM, SIGKILL after `graceMs`),
 * then SIGKILLs anything left in the group. Returns the pids that were still running.
 */
export async function stopRecordedProcesses(dir: string, pgid: number, graceMs = 15_000): Promise<number[]> {
  const running = Object.values(recordedPids(dir)).filter((pid) => procStat(pid)?.pgrp === pgid);
  for (const pid of running) process.kill(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (running.some((pid) => procStat(pid) !== null) && Date.now() < deadline) await delay(100);
  for (const pid of running) if (procStat(pid)?.pgrp === pgid) process.kill(pid, "SIGKILL");
  killGroup(pgid, "SIGKILL");
  groups.delete(pgid);
  return running;
}
