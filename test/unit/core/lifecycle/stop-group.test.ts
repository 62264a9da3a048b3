/** The start/stop group: reverse order, once, every stop runs, failures collected, a failed start unwinds. */
import { describe, expect, it } from "vitest";
import { StopGroup } from "../../../../src/core/lifecycle/stop-group.js";

describe("StopGroup", () => {
  it("stops the parts in reverse order of registration, each once, however often stop is called", async () => {
    const g = new StopGroup();
    const order: string[] = [];
    g.add("a", () => order.push("a"));
    await g.start(
      "b",
      () => "B",
      (b) => order.push(b),
    );
    g.add("c", async () => {
      await Promise.resolve();
      order.push("c");
    });
    expect(g.stopped).toBe(false);
    const first = g.stop();
    const second = g.stop();
    expect(second).toBe(first);
    expect(g.stopped).toBe(true);
    await Promise.all([first, second, g.stop()]);
    expect(order).toEqual(["c", "B", "a"]);
  });

  it("runs every stop when some fail, then rejects with the one failure as it is", async () => {
    const g = new StopGroup();
    const order: string[] = [];
    const boom = new Error("pool did not end");
    g.add("a", () => order.push("a"));
    g.add("b", () => {
      throw boom;
    });
    g.add("c", () => order.push("c"));
    await expect(g.stop()).rejects.toBe(boom);
    expect(order).toEqual(["c", "a"]);
  });

  it("collects several failures in an AggregateError, naming a part whose failure is not an Error", async () => {
    const g = new StopGroup();
    g.add("first", () => Promise.reject(new Error("one")));
    g.add("second", () => Promise.reject("two"));
    const err = await g.stop().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors.map((e: Error) => e.message)).toEqual(["second: two", "one"]);
  });

  it("stops a part registered after the stop began", async () => {
    const g = new StopGroup();
    await g.stop();
    let late = false;
    g.add("late", () => {
      late = true;
    });
    await g.stop();
    await Promise.resolve();
    await Promise.resolve();
    expect(late).toBe(true);
  });

  it("startAll: a start that throws stops what started so far and rethrows the start's error", async () => {
    const g = new StopGroup();
    const order: string[] = [];
    const portTaken = new Error("EADDRINUSE");
    await expect(
      g.startAll(async () => {
        g.add("pool", () => order.push("pool"));
        await g.start(
          "informers",
          () => "informers",
          (p) => order.push(p),
        );
        await g.start(
          "server",
          () => Promise.reject(portTaken),
          () => order.push("server"),
        );
        return "never";
      }),
    ).rejects.toBe(portTaken);
    expect(order).toEqual(["informers", "pool"]);
    expect(g.stopped).toBe(true);
  });
});
