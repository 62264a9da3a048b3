/**
 * `writ dev`'s shutdown request: the first SIGINT or SIGTERM, at any point of its life.
 *
 * Promise: from the moment `devShutdownRequest()` returns, a shutdown signal never kills the
 * process; the first one is recorded (`received()`) and resolves `signal`, and `writ dev` acts on
 * it at its next step (./index.ts: during start-up it stops what it started so far, Postgres
 * included, and exits 0). A later signal (not the same Ctrl-C delivered twice, ../api/signals.ts)
 * calls `again` (default: exit 1 at once; Postgres, once spawned, still gets its fast shutdown
 * from the `exit` hook of ./postgres.ts).
 *
 * `writ` installs it before it loads `writ dev`'s modules (that takes seconds under tsx on a busy
 * machine), and bin/writ.mjs records the signals that come even earlier, while Node loads the
 * CLI: they are taken over here (`globalThis[Symbol.for("writ.earlySignals")]`), the first one
 * counting as the request.
 */
import { onShutdownSignals } from "../api/signals.js";

/** A shutdown request (see the module comment). */
export interface ShutdownRequest {
  /** Resolves with the first signal. */
  readonly signal: Promise<NodeJS.Signals>;
  /** The first signal, or null while none came. */
  received(): NodeJS.Signals | null;
  /** Removes the signal handlers. */
  remove(): void;
}

/** What bin/writ.mjs leaves for `writ dev`: the first signal it saw, and its handler. */
interface EarlySignals {
  first: NodeJS.Signals | null;
  handler: (signal: NodeJS.Signals) => void;
}

const EARLY = Symbol.for("writ.earlySignals");

/** Takes over bin/writ.mjs's early handlers; the first signal they saw, or null. */
function takeEarlySignals(): NodeJS.Signals | null {
  const store = globalThis as unknown as Record<symbol, EarlySignals | undefined>;
  const early = store[EARLY];
  if (!early) return null;
  delete store[EARLY];
  process.removeListener("SIGINT", early.handler);
  process.removeListener("SIGTERM", early.handler);
  return early.first;
}

function exitNow(): void {
  console.error("writ dev: second signal, exiting now");
  process.exit(1);
}

/** Installs `writ dev`'s shutdown handlers (see the module comment). */
export function devShutdownRequest(again: (signal: NodeJS.Signals) => void = exitNow): ShutdownRequest {
  let got: NodeJS.Signals | null = null;
  let resolveSignal: (signal: NodeJS.Signals) => void = () => {};
  const signal = new Promise<NodeJS.Signals>((r) => (resolveSignal = r));
  const first = (s: NodeJS.Signals) => {
    if (got !== null) return;
    got = s;
    resolveSignal(s);
  };
  // Ours first, then the early ones removed: no instant without a handler.
  const remove = onShutdownSignals({ first, again });
  const early = takeEarlySignals();
  if (early !== null) first(early);
  return { signal, received: () => got, remove };
}
