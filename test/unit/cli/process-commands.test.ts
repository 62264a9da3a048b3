import { describe, expect, it } from "vitest";
import { processFlags } from "../../../src/cli/process-commands.js";

describe("flags of serve, dev and migrate", () => {
  it("--port and --host become PORT and HOST, over the environment", () => {
    expect(processFlags("serve", ["--port", "9000", "--host", "::1"], { PORT: "8080", X: "1" })).toEqual({
      run: { env: { PORT: "9000", HOST: "::1", X: "1" }, reset: false },
    });
    expect(processFlags("dev", ["--reset"], {})).toEqual({ run: { env: {}, reset: true } });
  });

  it("refuses what a verb does not take, and a port out of range", () => {
    expect(processFlags("serve", ["--reset"], {})).toHaveProperty("refused", expect.stringContaining("--reset"));
    expect(processFlags("migrate", ["--host", "x"], {})).toHaveProperty("refused");
    expect(processFlags("dev", ["extra"], {})).toHaveProperty("refused");
    expect(processFlags("dev", ["--port", "0"], {})).toHaveProperty("refused", expect.stringContaining("--port must be a port number"));
    expect(processFlags("serve", ["-h"], {})).toHaveProperty("help", expect.stringContaining("usage: writ serve"));
  });
});
