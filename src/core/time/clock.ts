/**
 * Time as the controller's queues and caches (and the namespace bindings) see it: the current
 * instant and one-shot timers. The real clock uses `Date.now` and `setTimeout` (unref'd: a
 * pending requeue never keeps a process alive); tests pass a fake one and advance it by hand.
 */

/** A timer handle of a `Clock`. */
export interface ClockTimer {
  cancel(): void;
}

/** The current time and timers. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs `fn` once after `ms` (at least 0). */
  setTimer(fn: () => void, ms: number): ClockTimer;
}

/** Longest delay Node's setTimeout supports; longer timers are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The wall clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    let t: NodeJS.Timeout;
    const arm = (left: number) => {
      t = setTimeout(() => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : fn()), Math.min(Math.max(0, left), MAX_TIMER_MS));
      t.unref();
    };
    arm(ms);
    return { cancel: () => clearTimeout(t) };
  },
};
