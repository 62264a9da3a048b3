/**
 * The closed loop of the direct scenarios of `npm run bench:verify` ((d) and (e)): `connections`
 * concurrent callers, each calling `call(i)` (i counts calls across all callers) until
 * `seconds` have passed, every call's latency and verdict recorded. The same figures the HTTP
 * driver reports (./driver.ts), the load's CPU being this process's.
 */
import { summarize } from "../stats.js";
import type { DriverResult } from "./driver.js";

/** Runs the loop; `call` returns the verdict of its call (a throw counts as an error). */
export async function closedLoop(connections: number, seconds: number, call: (i: number) => Promise<string>): Promise<DriverResult> {
  const latencies: number[] = [];
  const verdicts: Record<string, number> = {};
  let errors = 0;
  let issued = 0;
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        try {
          const v = await call(issued++);
          latencies.push(performance.now() - t);
          verdicts[v] = (verdicts[v] ?? 0) + 1;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  return { ...summarize(latencies, elapsed), statuses: {}, verdicts, errors, cpuSeconds: (cpu.user + cpu.system) / 1e6, latencies };
}
