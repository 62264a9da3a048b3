import { afterEach, describe, expect, it } from "vitest";
import { devShutdownRequest, type ShutdownRequest } from "../../../src/dev/shutdown.js";

const EARLY = Symbol.for("writ.earlySignals");
const store = globalThis as unknown as Record<symbol, unknown>;

/** What bin/writ.mjs leaves for `writ dev` before the CLI has loaded: a recorder on both signals. */
function earlyRecorder(first: NodeJS.Signals | null) {
  const early = { first, handler: (signal: NodeJS.Signals) => (early.first ??= signal) };
  process.on("SIGINT", early.handler);
  process.on("SIGTERM", early.handler);
  store[EARLY] = early;
  return early;
}

let request: ShutdownRequest | undefined;
afterEach(() => {
  request?.remove();
  request = undefined;
  delete store[EARLY];
});

describe("devShutdownRequest", () => {
  it("takes over bin/writ.mjs's early handlers: a signal they recorded is the shutdown request", async () => {
    const early = earlyRecorder("SIGTERM");
    request = devShutdownRequest();
    expect(request.received()).toBe("SIGTERM");
    await expect(request.signal).resolves.toBe("SIGTERM");
    expect(process.listeners("SIGTERM")).not.toContain(early.handler);
    expect(process.listeners("SIGINT")).not.toContain(early.handler);
    expect(store[EARLY]).toBeUndefined();
  });

  it("without an early signal nothing is requested yet, and its own handlers replace the early ones", () => {
    const before = process.listenerCount("SIGTERM");
    const early = earlyRecorder(null);
    request = devShutdownRequest();
    expect(request.received()).toBeNull();
    expect(process.listeners("SIGTERM")).not.toContain(early.handler);
    expect(process.listenerCount("SIGTERM")).toBe(before + 1);
    request.remove();
    expect(process.listenerCount("SIGTERM")).toBe(before);
  });
});
