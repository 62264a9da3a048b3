/**
 * What a verb may touch besides files: its two output streams, the environment, the clock,
 * `fetch`, a sleep, and a signal that asks a long-running verb (the log monitor) to stop.
 * Verbs take a `CliIo`, so tests call `run(argv, io)` in-process with captured output, a fixed
 * clock and a local server, and no child process.
 */
import { setTimeout as delay } from "node:timers/promises";

/** The world of one verb run. */
export interface CliIo {
  /** Writes `text` to standard output (as is: add the newline yourself). */
  stdout(text: string): void;
  /** Writes `text` to standard error (as is). */
  stderr(text: string): void;
  /** The environment (secrets such as WRIT_API_KEY come from here or from files). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The current time. */
  now(): Date;
  /** HTTP client. */
  fetch: typeof fetch;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Aborted when the verb should stop (Ctrl-C); absent: never. */
  readonly signal?: AbortSignal;
}

/** Sleeps `ms`, returning early when `signal` aborts. */
export async function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, signal ? { signal } : {});
  } catch {
    // aborted: return early
  }
}

/**
 * The real process: stdout, stderr, process.env, the system clock and global fetch. The stop
 * signal is made on first use (only the monitor asks for it): from then on SIGINT and SIGTERM
 * abort it instead of ending the process, so a verb that never asks keeps Ctrl-C's default.
 */
export function processIo(): CliIo {
  let controller: AbortController | undefined;
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    now: () => new Date(),
    fetch: (input, init) => fetch(input, init),
    sleep: abortableSleep,
    get signal(): AbortSignal {
      if (controller === undefined) {
        const c = new AbortController();
        process.once("SIGINT", () => c.abort());
        process.once("SIGTERM", () => c.abort());
        controller = c;
      }
      return controller.signal;
    },
  };
}
