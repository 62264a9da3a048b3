/**
 * The controller's metrics, under controller-runtime's names and buckets so existing dashboards
 * and alerts work, on the controller's own prom-client registry (with the default process
 * metrics): reconciles by controller and result, reconcile errors, panics (a reconcile that threw
 * a programming error: TypeError, RangeError, ReferenceError, SyntaxError, the JavaScript
 * analogue of a recovered Go panic) and terminal errors (a `TerminalError`, not retried) and
 * time, active workers and the maximum, the work queues' depth, adds, retries, queue and work
 * durations, unfinished work and the longest running processor, and whether this replica leads.
 * Writ's own: `writ_controller_watch_up` (1 while every informer watches) and
 * `writ_controller_api_reachable` (1 while the probe of the API server answers).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { QueueMetrics } from "./queue/work-queue.js";

/** Result label of `controller_runtime_reconcile_total`. */
export type ReconcileResultLabel = "success" | "error" | "requeue" | "requeue_after";

/** controller-runtime's reconcile time buckets (seconds). */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10,
  15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue buckets: 10 ns to 10 s, by tens. */
const QUEUE_BUCKETS = Array.from({ length: 10 }, (_, i) => 1e-8 * 10 ** i);

/** Every metric of the controller. */
export interface ControllerMetrics {
  readonly registry: Registry;
  /** Creates the zero-valued series of `controller` (every result, errors) with its number of workers. */
  initController(controller: string, workers?: number): void;
  /** Records one reconcile of `controller`; `kind` says whether an error was a panic or terminal. */
  reconciled(controller: string, result: ReconcileResultLabel, seconds: number, kind?: "panic" | "terminal"): void;
  /** A worker of `controller` starts (+1) or ends (-1) a reconcile. */
  activeWorkers(controller: string, delta: 1 | -1): void;
  /** The metrics sink of the work queue `name`; `unfinished` is read at scrape time. */
  queue(name: string, unfinished?: () => { totalSeconds: number; longestSeconds: number }): QueueMetrics;
  /** Reads, at scrape time, whether every informer watches and whether the API server answers. */
  watch(up: () => boolean, apiReachable: () => boolean): void;
  /** Sets leader_election_master_status for lease `name`. */
  leading(name: string, leader: boolean): void;
}

/** Creates the registry and the metrics (with default process metrics unless `defaults` is false). */
export function createControllerMetrics(opts: { defaults?: boolean } = {}): ControllerMetrics {
  const registry = new Registry();
  if (opts.defaults ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const total = new Counter({
    name: "controller_runtime_reconcile_total",
    help: "Total number of reconciliations per controller",
    labelNames: ["controller", "result"] as const,
    registers,
  });
  const errors = new Counter({
    name: "controller_runtime_reconcile_errors_total",
    help: "Total number of reconciliation errors per controller",
    labelNames: ["controller"] as const,
    registers,
  });
  const time = new Histogram({
    name: "controller_runtime_reconcile_time_seconds",
    help: "Length of time per reconciliation per controller",
    labelNames: ["controller"] as const,
    buckets: RECONCILE_BUCKETS,
    registers,
  });
  const depth = new Gauge({ name: "workqueue_depth", help: "Current depth of workqueue", labelNames: ["name"] as const, registers });
  const adds = new Counter({ name: "workqueue_adds_total", help: "Total number of adds handled by workqueue", labelNames: ["name"] as const, registers });
  const retries = new Counter({
    name: "workqueue_retries_total",
    help: "Total number of retries handled by workqueue",
    labelNames: ["name"] as const,
    registers,
  });
  const queueDuration = new Histogram({
    name: "workqueue_queue_duration_seconds",
    help: "How long in seconds an item stays in workqueue before being requested",
    labelNames: ["name"] as const,
    buckets: QUEUE_BUCKETS,
    registers,
  });
  const workDuration = new Histogram({
    name: "workqueue_work_duration_seconds",
    help: "How long in seconds processing an item from workqueue takes",
    labelNames: ["name"] as const,
    buckets: QUEUE_BUCKETS,
    registers,
  });
  const panics = new Counter({
    name: "controller_runtime_reconcile_panics_total",
    help: "Total number of reconciliation panics per controller",
    labelNames: ["controller"] as const,
    registers,
  });
  const terminal = new Counter({
    name: "controller_runtime_terminal_reconcile_errors_total",
    help: "Total number of terminal reconciliation errors per controller",
    labelNames: ["controller"] as const,
    registers,
  });
  const active = new Gauge({
    name: "controller_runtime_active_workers",
    help: "Number of currently used workers per controller",
    labelNames: ["controller"] as const,
    registers,
  });
  const maxConcurrent = new Gauge({
    name: "controller_runtime_max_concurrent_reconciles",
    help: "Maximum number of concurrent reconciles per controller",
    labelNames: ["controller"] as const,
    registers,
  });
  const unfinishedOf = new Map<string, () => { totalSeconds: number; longestSeconds: number }>();
  new Gauge({
    name: "workqueue_unfinished_work_seconds",
    help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    labelNames: ["name"] as const,
    registers,
    collect() {
      for (const [name, read] of unfinishedOf) this.set({ name }, read().totalSeconds);
    },
  });
  new Gauge({
    name: "workqueue_longest_running_processor_seconds",
    help: "How many seconds has the longest running processor for workqueue been running.",
    labelNames: ["name"] as const,
    registers,
    collect() {
      for (const [name, read] of unfinishedOf) this.set({ name }, read().longestSeconds);
    },
  });
  let watchUp: (() => boolean) | undefined;
  let apiUp: (() => boolean) | undefined;
  new Gauge({
    name: "writ_controller_watch_up",
    help: "1 while every informer of the controller watches (its view of the cluster is current), else 0.",
    registers,
    collect() {
      if (watchUp) this.set(watchUp() ? 1 : 0);
    },
  });
  new Gauge({
    name: "writ_controller_api_reachable",
    help: "1 while the controller's probe of the API server (GET /version) answers, else 0.",
    registers,
    collect() {
      if (apiUp) this.set(apiUp() ? 1 : 0);
    },
  });
  const master = new Gauge({
    name: "leader_election_master_status",
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
    labelNames: ["name"] as const,
    registers,
  });
  return {
    registry,
    initController(controller, workers) {
      for (const result of ["success", "error", "requeue", "requeue_after"] as const) total.inc({ controller, result }, 0);
      errors.inc({ controller }, 0);
      panics.inc({ controller }, 0);
      terminal.inc({ controller }, 0);
      active.set({ controller }, 0);
      if (workers !== undefined) maxConcurrent.set({ controller }, workers);
    },
    reconciled(controller, result, seconds, kind) {
      total.inc({ controller, result });
      if (result === "error") errors.inc({ controller });
      if (kind === "panic") panics.inc({ controller });
      if (kind === "terminal") terminal.inc({ controller });
      time.observe({ controller }, seconds);
    },
    activeWorkers(controller, delta) {
      active.inc({ controller }, delta);
    },
    watch(up, reachable) {
      watchUp = up;
      apiUp = reachable;
    },
    queue(name, unfinished) {
      if (unfinished) unfinishedOf.set(name, unfinished);
      // Zero-valued series exist from the start, so a dashboard shows 0 rather than nothing.
      adds.inc({ name }, 0);
      retries.inc({ name }, 0);
      depth.set({ name }, 0);
      return {
        added: () => adds.inc({ name }),
        depth: (n) => depth.set({ name }, n),
        retried: () => retries.inc({ name }),
        queueLatency: (s) => queueDuration.observe({ name }, s),
        workDuration: (s) => workDuration.observe({ name }, s),
      };
    },
    leading(name, leader) {
      master.set({ name }, leader ? 1 : 0);
    },
  };
}
