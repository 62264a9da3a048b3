/** Small helpers shared by the benchmarks: percentiles and aligned printing. */

/** The q-quantile (0..1) of sorted numbers (nearest rank). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}

/** Times `fn` `n` times individually; returns sorted per-call nanoseconds and total seconds. */
export function timeCalls(n: number, fn: (i: number) => void): { ns: Float64Array; seconds: number } {
  const ns = new Float64Array(n);
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    fn(i);
    ns[i] = Number(process.hrtime.bigint() - t);
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  ns.sort();
  return { ns, seconds };
}

/** Prints one result row. */
export function row(name: string, values: Record<string, string | number>): void {
  const cells = Object.entries(values).map(([k, v]) => `${k}=${typeof v === "number" ? fmt(v) : v}`);
  console.log(`${name.padEnd(34)} ${cells.join("  ")}`);
}

function fmt(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2);
}

/** Throughput and latency quantiles of one load run (latencies in ms, any order). */
export interface LoadSummary {
  requests: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Summarizes a load run: sorts `latencies` in place and reads the quantiles. */
export function summarize(latencies: number[], seconds: number): LoadSummary {
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    p50: quantile(latencies, 0.5),
    p90: quantile(latencies, 0.9),
    p99: quantile(latencies, 0.99),
    max: latencies[latencies.length - 1] ?? Number.NaN,
  };
}
