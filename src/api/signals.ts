/**
 * Shutdown signals (SIGINT, SIGTERM) of a long-running command (`writ serve`, `writ dev`): the
 * first starts a graceful shutdown; a later one exits at once with status 1.
 *
 * One Ctrl-C can arrive twice: the terminal signals the whole foreground process group, and a
 * parent that forwards signals (npm running `npm start`, tsx's wrapper) sends it again a moment
 * later. So a repeat within `repeatWindowMs` (default 1 s) of the first is the same keystroke and
 * is ignored; only a signal after that window means "stop now".
 */

/** Default window in which a repeated signal counts as the same one. */
export const SIGNAL_REPEAT_WINDOW_MS = 1000;

/** Handlers of `onShutdownSignals`. */
export interface ShutdownHandlers {
  /** The first signal. */
  first(signal: NodeJS.Signals): void;
  /** A later signal, outside the repeat window (default: exit 1). */
  again?(signal: NodeJS.Signals): void;
  repeatWindowMs?: number;
  /** Clock (ms), for tests. */
  now?: () => number;
}

/** Installs the handlers; returns a function that removes them. */
export function onShutdownSignals(h: ShutdownHandlers, target: Pick<NodeJS.Process, "on" | "removeListener"> = process): () => void {
  const now = h.now ?? Date.now;
  const windowMs = h.repeatWindowMs ?? SIGNAL_REPEAT_WINDOW_MS;
  let firstAt: number | null = null;
  const handler = (signal: NodeJS.Signals) => {
    if (firstAt === null) {
      firstAt = now();
      h.first(signal);
      return;
    }
    if (now() - firstAt < windowMs) return; // the same Ctrl-C, delivered twice
    if (h.again) h.again(signal);
    else process.exit(1);
  };
  target.on("SIGINT", handler);
  target.on("SIGTERM", handler);
  return () => {
    target.removeListener("SIGINT", handler);
    target.removeListener("SIGTERM", handler);
  };
}
