/**
 * The envtest helper picks free ports, then starts etcd and kube-apiserver on them; another
 * process can bind a port in between (other test files start servers in parallel). Here a
 * listener holds the first port handed out: etcd fails to bind it, and the helper starts it
 * again on new ports instead of failing the test file.
 */
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type * as FreePort from "../../src/dev/free-port.js";
import { ensureEnvtest, startEnvtest, type Envtest } from "../helpers/envtest.js";

const held = vi.hoisted(() => ({ port: 0, handedOut: [] as number[] }));

vi.mock("../../src/dev/free-port.js", async (importOriginal) => {
  const real = await importOriginal<typeof FreePort>();
  return {
    ...real,
    freePort: async (host?: string) => {
      const port = held.handedOut.length === 0 && held.port ? held.port : await real.freePort(host);
      held.handedOut.push(port);
      return port;
    },
  };
});

describe("envtest ports", () => {
  let env: Envtest | undefined;
  let holder: Server;

  beforeAll(async () => {
    holder = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen({ host: "127.0.0.1", port: 0 }, resolve));
    const addr = holder.address();
    held.port = typeof addr === "object" && addr ? addr.port : 0;
    await ensureEnvtest();
  }, 30 * 60_000);

  afterAll(async () => {
    await env?.stop();
    await new Promise((resolve) => holder.close(resolve));
  }, 60_000);

  it(
    "starts etcd again on new ports when another process holds the one it was given",
    async () => {
      expect(held.port).toBeGreaterThan(0);
      env = await startEnvtest();
      // the held port was handed to etcd first; two more for its retry, one for kube-apiserver
      expect(held.handedOut[0]).toBe(held.port);
      expect(held.handedOut.length).toBe(5);
      expect(env.server).not.toContain(`:${held.port}`);
      const r = await env.kubectl(["get", "--raw", "/readyz"]);
      expect(r.stdout).toBe("ok");
    },
    5 * 60_000,
  );
});
