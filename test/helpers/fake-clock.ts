/** A hand-driven Clock for tests: time moves only through `advance`, firing due timers in order. */
import type { Clock, ClockTimer } from "../../src/core/time/clock.js";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/** A fake clock starting at `start` (epoch ms). */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = 1_800_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): ClockTimer {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return { cancel: () => (this.timers = this.timers.filter((x) => x !== timer)) };
  }

  /** Pending timers. */
  pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, running every timer that falls due, in time order. */
  advance(ms: number): void {
    const target = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = due.at;
      due.fn();
    }
    this.t = target;
  }
}
