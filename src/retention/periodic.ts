/**
 * A background pass run on a schedule, shared by the retention worker and the hold expiry sweep:
 * the first pass after `firstDelayMs`, then every `intervalMs` after the end of the previous one;
 * one pass at a time (`runNow` queues after a pass in progress); `stop()` cancels the next pass
 * and resolves once a pass in progress has ended. The pass itself decides what a skip or a
 * failure returns, and must not throw.
 */

/** A running schedule. */
export interface Periodic<T> {
  /** Runs one pass now (after a pass in progress). */
  runNow(): Promise<T>;
  stop(): Promise<void>;
}

/** Starts `pass` on the schedule (see the module comment); `stopped()` tells a pass to end early. */
export function startPeriodic<T>(pass: (stopped: () => boolean) => Promise<T>, idle: T, o: { intervalMs: number; firstDelayMs: number }): Periodic<T> {
  let stopped = false;
  let running: Promise<T> = Promise.resolve(idle);
  let timer: NodeJS.Timeout | undefined;
  const runNow = (): Promise<T> => {
    running = running.then(() => pass(() => stopped));
    return running;
  };
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => void runNow().then(() => schedule(o.intervalMs)), ms);
    timer.unref();
  };
  schedule(o.firstDelayMs);
  return {
    runNow,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
