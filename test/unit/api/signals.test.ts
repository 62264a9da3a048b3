import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { onShutdownSignals } from "../../../src/api/signals.js";

describe("onShutdownSignals", () => {
  it("the first signal starts the shutdown; a repeat inside the window is the same keystroke; a later one is 'stop now'", () => {
    const target = new EventEmitter();
    let t = 0;
    const calls: string[] = [];
    const remove = onShutdownSignals(
      { first: (s) => calls.push(`first ${s}`), again: (s) => calls.push(`again ${s}`), repeatWindowMs: 1000, now: () => t },
      target as unknown as NodeJS.Process,
    );
    target.emit("SIGINT", "SIGINT");
    t = 50;
    target.emit("SIGINT", "SIGINT");
    expect(calls).toEqual(["first SIGINT"]);
    t = 1500;
    target.emit("SIGTERM", "SIGTERM");
    expect(calls).toEqual(["first SIGINT", "again SIGTERM"]);
    remove();
    expect(target.listenerCount("SIGINT") + target.listenerCount("SIGTERM")).toBe(0);
  });
});
