/**
 * One log format: a line of the data plane (Fastify's pino with LOG_FORMAT) and a line of the
 * controller (jsonLogger) carry the same members with the same types: the level by name, the
 * time as RFC 3339 with milliseconds, pid, hostname and msg.
 */
import { Writable } from "node:stream";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { LOG_FORMAT } from "../../src/api/app.js";
import { jsonLogger } from "../../src/controller/log.js";

const shape = (line: Record<string, unknown>) => Object.fromEntries(Object.entries(line).map(([k, v]) => [k, typeof v]));

describe("the log format", () => {
  it("is the same JSON line for the data plane and the controller", async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString("utf8")), done()) });
    const app = Fastify({ logger: { level: "info", ...LOG_FORMAT, stream } });
    app.log.warn({ key: "value" }, "from the data plane");
    await app.close();
    jsonLogger("info", (l) => lines.push(l)).warn("from the controller", { key: "value" });
    const [plane, controller] = lines.filter((l) => l.includes("from the")).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(plane).toMatchObject({ level: "warn", key: "value", msg: "from the data plane", pid: process.pid });
    expect(controller).toMatchObject({ level: "warn", key: "value", msg: "from the controller", pid: process.pid });
    expect(shape(plane ?? {})).toEqual(shape(controller ?? {}));
    for (const l of [plane, controller]) expect(l?.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Object.keys(plane ?? {})).toEqual(Object.keys(controller ?? {}));
  });

  it("names an error `error` in both processes (the message), with `stack` beside it for the data plane's unexpected errors", async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString("utf8")), done()) });
    const app = Fastify({ logger: { level: "info", ...LOG_FORMAT, stream } });
    app.log.error({ err: new Error("boom") }, "unexpected");
    app.log.warn({ error: "gone" }, "expected");
    await app.close();
    jsonLogger("info", (l) => lines.push(l)).warn("from the controller", { error: "gone" });
    const [unexpected, expected, controller] = lines
      .filter((l) => /unexpected|expected|controller/.test(l))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(unexpected).toMatchObject({ error: "boom", stack: expect.stringContaining("Error: boom") });
    expect(unexpected).not.toHaveProperty("err");
    expect(expected).toMatchObject({ error: "gone" });
    expect(expected).not.toHaveProperty("stack");
    expect(controller).toMatchObject({ error: "gone" });
  });
});
