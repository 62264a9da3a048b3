/**
 * CPU time of processes on Linux, from /proc (user + system, in seconds; clock ticks of
 * 1/100 s, the Linux default USER_HZ). Used by the benchmarks to print CPU per request of each
 * process in a load run. Elsewhere (no /proc) every figure is undefined and nothing is printed.
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

function stat(pid: number): { pid: number; ppid: number; seconds: number; children: number } | undefined {
  try {
    // The command name (2nd field) may hold spaces: the fields after its closing parenthesis.
    const rest = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").pop()?.split(" ") ?? [];
    return {
      pid,
      ppid: Number(rest[1]),
      seconds: (Number(rest[11]) + Number(rest[12])) / TICKS_PER_SECOND,
      children: (Number(rest[13]) + Number(rest[14])) / TICKS_PER_SECOND,
    };
  } catch {
    return undefined;
  }
}

/** CPU seconds used so far by process `pid` (undefined when unknown). */
export function cpuSeconds(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : stat(pid)?.seconds;
}

/**
 * Runs `round` again and again for `seconds` (at most 1,000,000 times) and returns process
 * `pid`'s CPU µs per round (a backend's: what the rounds cost it; clock ticks of 10 ms).
 */
export async function cpuPerRound(pid: number, seconds: number, round: () => Promise<void>): Promise<{ us: number; rounds: number }> {
  const before = cpuSeconds(pid) ?? 0;
  const until = performance.now() + seconds * 1000;
  let rounds = 0;
  while (performance.now() < until && rounds < 1_000_000) {
    await round();
    rounds++;
  }
  return { us: (((cpuSeconds(pid) ?? 0) - before) * 1e6) / Math.max(1, rounds), rounds };
}

/** The children of `pid` now. */
function children(pid: number): NonNullable<ReturnType<typeof stat>>[] {
  const out = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s && s.ppid === pid) out.push(s);
  }
  return out;
}

/** The process ids of the children of `pid` now (a postmaster's backends). */
export function childPids(pid: number): number[] {
  return children(pid).map((c) => c.pid);
}

/** The figure of `treeCpuSeconds`, read once. */
function treeNow(pid: number): number | undefined {
  const root = stat(pid);
  if (!root) return undefined;
  let total = root.seconds + root.children;
  for (const c of children(pid)) total += c.seconds;
  return total;
}

/**
 * CPU seconds used so far by process `pid` and its children, live and ended (a Postgres
 * cluster: the postmaster and its backends; an ended child's time is in the parent's
 * cutime/cstime once the parent has waited for it). Backends of a pool closed just before the
 * reading may be counted neither as live children nor yet in cutime (seen in bench:verify:
 * ten seconds of backend CPU charged to the next scenario), so this waits until the figure
 * settles: two readings 100 ms apart within 10 ms of CPU, at most `maxWaitMs`.
 */
export async function treeCpuSeconds(pid: number | undefined, maxWaitMs = 3000): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  const until = Date.now() + maxWaitMs;
  let last = treeNow(pid);
  while (last !== undefined && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    const now = treeNow(pid);
    if (now === undefined || Math.abs(now - last) < 0.01) return now;
    last = now;
  }
  return last;
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
