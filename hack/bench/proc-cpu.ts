/**
 * CPU time of processes on Linux, from /proc (user + system, in seconds; clock ticks of
 * 1/100 s, the Linux default USER_HZ). Used by the benchmarks to print CPU per request of each
 * process in a load run. Elsewhere (no /proc) every figure is undefined and nothing is printed.
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

function stat(pid: number): { ppid: number; seconds: number; children: number } | undefined {
  try {
    // The command name (2nd field) may hold spaces: the fields after its closing parenthesis.
    const rest = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").pop()?.split(" ") ?? [];
    return { ppid: Number(rest[1]), seconds: (Number(rest[11]) + Number(rest[12])) / TICKS_PER_SECOND, children: (Number(rest[13]) + Number(rest[14])) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/** CPU seconds used so far by process `pid` (undefined when unknown). */
export function cpuSeconds(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : stat(pid)?.seconds;
}

/**
 * CPU seconds used so far by process `pid` and its children, live and ended (a Postgres
 * cluster: the postmaster and its backends; an ended child's time is in the parent's
 * cutime/cstime once it was waited for).
 */
export function treeCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  const root = stat(pid);
  if (!root) return undefined;
  let total = root.seconds + root.children;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s && s.ppid === pid) total += s.seconds;
  }
  return total;
}

/** The pid in a Postgres data folder's postmaster.pid, or undefined. */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(`${dataDir}/postmaster.pid`, "utf8").split("\n")[0]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
