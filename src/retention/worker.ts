/**
 * The retention worker of a data-plane process: runs `pruneOnce` (src/store/retention.ts)
 * shortly after start and then every `intervalMs`.
 *
 * Promises:
 * - One pass at a time in a process, and one process at a time across processes (the
 *   advisory lock; a process that finds it taken counts the run as `busy`).
 * - A failed pass (Postgres down, say) is logged and counted (`error`); the next one runs on
 *   schedule. Nothing is retried in a loop, and request handling never waits for it.
 * - Metrics: `writ_retention_deleted_total{table}` and `writ_retention_runs_total{result}`
 *   (`ok`, `busy`, `error`).
 * - `stop()` cancels the next pass and resolves once a pass in progress has ended.
 */
import type { Pool } from "pg";
import { Counter, type Registry } from "prom-client";
import { registered } from "../metrics/index.js";
import { pruneOnce, type PruneResult, type RetentionPolicy } from "../store/index.js";
import { startPeriodic } from "./periodic.js";

/** Where the worker reports (a pino/Fastify logger fits). */
export interface RetentionLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** Options of `startRetention`. */
export interface RetentionWorkerOptions {
  /** Time between passes, ms (> 0). */
  intervalMs: number;
  /** Delay before the first pass, ms (default the smaller of 60 s and `intervalMs`). */
  firstDelayMs?: number;
  registry?: Registry;
  log?: RetentionLog;
  /** Passes are skipped while this returns false (e.g. before migrations ran). */
  isReady?: () => boolean;
}

/** A running worker. */
export interface RetentionWorker {
  /** Runs one pass now (after a pass in progress); undefined when skipped or failed. */
  runNow(): Promise<PruneResult | undefined>;
  stop(): Promise<void>;
}

function counter(registry: Registry | undefined, name: string, help: string, label: string): Counter<string> {
  return registered(registry, name, (registers) => new Counter({ name, help, labelNames: [label], registers }));
}

/** Starts the worker (see the module comment). */
export function startRetention(pool: Pool, policy: RetentionPolicy, o: RetentionWorkerOptions): RetentionWorker {
  const deleted = counter(o.registry, "writ_retention_deleted_total", "Rows deleted by retention, by table.", "table");
  const runs = counter(o.registry, "writ_retention_runs_total", "Retention passes by result (ok, busy = another process was pruning, error).", "result");
  const pass = async (stopped: () => boolean): Promise<PruneResult | undefined> => {
    if (stopped() || (o.isReady && !o.isReady())) return undefined;
    try {
      const r = await pruneOnce(pool, policy);
      for (const [table, n] of Object.entries(r.deleted)) if (n > 0) deleted.inc({ table }, n);
      runs.inc({ result: r.busy ? "busy" : "ok" });
      const total = Object.values(r.deleted).reduce((a, b) => a + b, 0);
      if (total > 0) o.log?.info({ deleted: r.deleted }, "retention pass deleted old rows");
      return r;
    } catch (err) {
      runs.inc({ result: "error" });
      o.log?.warn({ err }, "retention pass failed; the next one runs on schedule");
      return undefined;
    }
  };
  return startPeriodic(pass, undefined, { intervalMs: o.intervalMs, firstDelayMs: o.firstDelayMs ?? Math.min(60_000, o.intervalMs) });
}
