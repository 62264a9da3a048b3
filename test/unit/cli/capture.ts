/**
 * A `CliIo` for in-process verb tests: captured stdout and stderr, a given environment, a fixed
 * clock, the real fetch and a sleep that returns at once (unless told otherwise).
 */
import type { CliIo } from "../../../src/cli/io.js";

/** A captured io and what the verb wrote. */
export interface CapturedIo extends CliIo {
  out(): string;
  err(): string;
}

/** The fixed time of captured runs. */
export const FIXED_NOW = new Date("2026-03-01T10:00:00Z");

/** A captured io; `over` replaces any member. */
export function captureIo(over: Partial<CliIo> = {}): CapturedIo {
  let out = "";
  let err = "";
  return {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    env: {},
    now: () => FIXED_NOW,
    fetch: (input, init) => fetch(input, init),
    sleep: async () => undefined,
    ...over,
    out: () => out,
    err: () => err,
  };
}

/** Runs `run(argv, io)` with a fresh captured io. */
export async function runVerb(
  verb: { run(argv: string[], io: CliIo): Promise<number> },
  argv: string[],
  over: Partial<CliIo> = {},
): Promise<{ code: number; out: string; err: string; io: CapturedIo }> {
  const io = captureIo(over);
  const code = await verb.run(argv, io);
  return { code, out: io.out(), err: io.err(), io };
}
