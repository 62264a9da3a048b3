/**
 * One teardown path for a process part made of parts (the controller, the delivery worker).
 *
 * Promises: every part that started registers its stop right after it started (`add`, or
 * `start`, which does both); `stop()` runs the registered stops in reverse order of
 * registration, each exactly once, every one of them even when an earlier one fails, and then
 * rejects with the failure (one error as it is, several as an AggregateError). `stop()` is
 * idempotent: later calls return the same promise. A part registered after `stop()` began is
 * stopped at once (a start that raced the stop does not leak). Pure: no I/O of its own.
 */

/** Stops one part; may be async. */
export type StopFn = () => unknown;

/** A group of started parts with one stop (see the module comment). */
export class StopGroup {
  private readonly stops: { name: string; stop: StopFn }[] = [];
  private stopping: Promise<void> | undefined;

  /** True once `stop()` was called. */
  get stopped(): boolean {
    return this.stopping !== undefined;
  }

  /** Registers the stop of a part that has started; stopped at once when the group is already stopping. */
  add(name: string, stop: StopFn): void {
    if (this.stopping) {
      void this.stopping.then(stop, stop).catch(() => {});
      return;
    }
    this.stops.push({ name, stop });
  }

  /** Starts a part and registers its stop (`stop(part)`); a start that throws registers nothing. */
  async start<T>(name: string, start: () => T | Promise<T>, stop: (part: T) => unknown): Promise<T> {
    const part = await start();
    this.add(name, () => stop(part));
    return part;
  }

  /** Stops every registered part in reverse order, once (see the module comment). */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const errors: unknown[] = [];
      for (const { name, stop } of this.stops.splice(0).reverse()) {
        try {
          await stop();
        } catch (err) {
          errors.push(err instanceof Error ? err : new Error(`${name}: ${String(err)}`));
        }
      }
      if (errors.length === 1) throw errors[0];
      if (errors.length > 1) throw new AggregateError(errors, `${errors.length} parts failed to stop`);
    })();
    return this.stopping;
  }

  /**
   * Runs `start` (which starts parts and registers them); when it throws, everything registered
   * so far is stopped (its own failures ignored) and the start's error is rethrown.
   */
  async startAll<T>(start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (err) {
      await this.stop().catch(() => {});
      throw err;
    }
  }
}
