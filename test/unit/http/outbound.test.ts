/**
 * The outbound client against local listeners only (127.0.0.1, ::1). Refusals are shown with a
 * resolver stub answering non-local addresses and a socket-opener spy that must never run.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LOOPBACK_OUTBOUND, STRICT_OUTBOUND } from "../../../src/http/outbound-address.js";
import { connectSocket, outboundRequest, OutboundError, type Connect, type Resolve } from "../../../src/http/outbound.js";

let server: Server;
let port = 0;
const seen: { url: string; headers: IncomingMessage["headers"]; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      seen.push({ url: req.url ?? "", headers: req.headers, body });
      if (req.url === "/big") res.writeHead(200).end("x".repeat(5000));
      else if (req.url === "/hang") return;
      else res.writeHead(200, { "content-type": "text/plain" }).end(`hello ${req.method} ${body}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** A socket opener that records its targets and opens real sockets (only ever to loopback here). */
function spyConnect() {
  return vi.fn<Connect>((t) => {
    if (t.host !== "127.0.0.1" && t.host !== "::1") throw new Error(`test would connect to ${t.host}`);
    return connectSocket(t);
  });
}

const stub = (...addresses: string[]): Resolve => vi.fn<Resolve>(async () => addresses.map((address) => ({ address, family: net.isIP(address) })));

describe("outboundRequest", () => {
  it("GETs and POSTs where the policy allows, reading the body", async () => {
    const get = await outboundRequest(LOOPBACK_OUTBOUND, { url: `http://127.0.0.1:${port}/a?b=1`, timeoutMs: 2000, maxBodyBytes: 1000 });
    expect(get).toEqual({ status: 200, body: "hello GET " });
    expect(seen.at(-1)?.url).toBe("/a?b=1");
    const post = await outboundRequest(LOOPBACK_OUTBOUND, {
      url: `http://127.0.0.1:${port}/p`,
      method: "POST",
      body: "{}",
      headers: { "x-a": "1" },
      timeoutMs: 2000,
      maxBodyBytes: 1000,
    });
    expect(post.body).toBe("hello POST {}");
    expect(seen.at(-1)?.headers["x-a"]).toBe("1");
    expect(seen.at(-1)?.headers.connection).toBe("close");
  });

  it("refuses a loopback literal under the strict policy without opening a socket", async () => {
    const connect = spyConnect();
    for (const host of ["127.0.0.1", "2130706433", "127.1", "0x7f.1", "[::1]", "[::ffff:7f00:1]", "[::ffff:127.0.0.1]"]) {
      const err = await outboundRequest(STRICT_OUTBOUND, { url: `http://${host}:${port}/`, timeoutMs: 2000, maxBodyBytes: 0 }, { connect }).catch(
        (e: unknown) => e,
      );
      expect(err, host).toBeInstanceOf(OutboundError);
      expect((err as OutboundError).code, host).toBe("REFUSED");
      expect((err as OutboundError).message).toMatch(/^destination refused by the outbound policy: .* is a loopback address$/);
    }
    expect(connect).not.toHaveBeenCalled();
  });

  it.each([
    ["10.0.0.5", "private"],
    ["169.254.169.254", "link-local"],
    ["::ffff:127.0.0.1", "loopback"],
    ["fd00::1", "unique-local"],
    ["100.64.1.1", "carrier-grade-nat"],
  ])("refuses a name that resolves to %s (%s) without opening a socket", async (address, cls) => {
    const connect = spyConnect();
    const resolve = stub(address);
    const err = await outboundRequest(STRICT_OUTBOUND, { url: "https://hooks.example.test/x", timeoutMs: 2000, maxBodyBytes: 0 }, { resolve, connect }).catch(
      (e: unknown) => e,
    );
    expect((err as OutboundError).code).toBe("REFUSED");
    expect((err as OutboundError).message).toContain(`hooks.example.test resolves to`);
    expect((err as OutboundError).message).toContain(`a ${cls} address`);
    expect(resolve).toHaveBeenCalledWith("hooks.example.test");
    expect(connect).not.toHaveBeenCalled();
  });

  it("checks EVERY address a name resolves to: one private address among public ones refuses", async () => {
    const connect = spyConnect();
    const err = await outboundRequest(
      STRICT_OUTBOUND,
      { url: "https://mixed.example.test/", timeoutMs: 2000, maxBodyBytes: 0 },
      { resolve: stub("93.184.216.34", "10.0.0.5"), connect },
    ).catch((e: unknown) => e);
    expect((err as OutboundError).code).toBe("REFUSED");
    expect(connect).not.toHaveBeenCalled();
  });

  it("connects to the address it checked, never resolving the name again (DNS rebinding)", async () => {
    const connect = spyConnect();
    const resolve = stub("127.0.0.1");
    const res = await outboundRequest(
      LOOPBACK_OUTBOUND,
      { url: `http://rebind.example.test:${port}/r`, timeoutMs: 2000, maxBodyBytes: 1000 },
      { resolve, connect },
    );
    expect(res.status).toBe(200);
    expect(resolve).toHaveBeenCalledTimes(1);
    expect(connect).toHaveBeenCalledTimes(1);
    expect(connect.mock.calls[0]?.[0]).toMatchObject({ host: "127.0.0.1", port, tls: false });
    expect(seen.at(-1)?.headers.host).toBe(`rebind.example.test:${port}`);
  });

  it("tries the next checked address when one does not connect", async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const connect = vi.fn<Connect>((t) => connectSocket({ ...t, port: t.host === "127.0.0.2" ? closedPort : port }));
    const res = await outboundRequest(
      LOOPBACK_OUTBOUND,
      { url: `http://two.example.test:${port}/`, timeoutMs: 2000, maxBodyBytes: 1000 },
      { resolve: stub("127.0.0.2", "127.0.0.1"), connect },
    );
    expect(res.status).toBe(200);
    expect(connect.mock.calls.map((c) => c[0].host)).toEqual(["127.0.0.2", "127.0.0.1"]);
  });

  it("gives up connecting after connectTimeoutMs", async () => {
    const never = new net.Socket(); // never connects
    const t0 = performance.now();
    const err = await outboundRequest(
      LOOPBACK_OUTBOUND,
      { url: "http://127.0.0.1:9/", timeoutMs: 5000, connectTimeoutMs: 150, maxBodyBytes: 0 },
      { connect: () => never },
    ).catch((e: unknown) => e);
    expect((err as OutboundError).code).toBe("CONNECT_TIMEOUT");
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(never.destroyed).toBe(true);
  });

  it("ends a silent answer at timeoutMs, an oversized one at maxBodyBytes, and at once on abort", async () => {
    const t0 = performance.now();
    const slow = await outboundRequest(LOOPBACK_OUTBOUND, { url: `http://127.0.0.1:${port}/hang`, timeoutMs: 200, maxBodyBytes: 10 }).catch((e: unknown) => e);
    expect((slow as OutboundError).code).toBe("TIMEOUT");
    expect(performance.now() - t0).toBeLessThan(2000);
    const big = await outboundRequest(LOOPBACK_OUTBOUND, { url: `http://127.0.0.1:${port}/big`, timeoutMs: 2000, maxBodyBytes: 100 }).catch((e: unknown) => e);
    expect((big as OutboundError).code).toBe("TOO_LARGE");
    const ctl = new AbortController();
    const pending = outboundRequest(LOOPBACK_OUTBOUND, { url: `http://127.0.0.1:${port}/hang`, timeoutMs: 10_000, maxBodyBytes: 10, signal: ctl.signal }).catch(
      (e: unknown) => e,
    );
    ctl.abort();
    expect(((await pending) as OutboundError).code).toBe("ABORTED");
  });

  it("refuses URLs it does not request", async () => {
    for (const url of ["file:///etc/passwd", "not a url", "http://u:p@127.0.0.1/"]) {
      expect(((await outboundRequest(LOOPBACK_OUTBOUND, { url, timeoutMs: 100, maxBodyBytes: 0 }).catch((e: unknown) => e)) as OutboundError).code, url).toBe(
        "BAD_URL",
      );
    }
  });

  it("reports a name that does not resolve", async () => {
    const resolve: Resolve = async () => {
      throw Object.assign(new Error("nope"), { code: "ENOTFOUND" });
    };
    const err = await outboundRequest(
      STRICT_OUTBOUND,
      { url: "https://gone.example.test/", timeoutMs: 100, maxBodyBytes: 0 },
      { resolve, connect: spyConnect() },
    ).catch((e: unknown) => e);
    expect((err as OutboundError).code).toBe("DNS");
    expect((err as OutboundError).message).toBe("gone.example.test did not resolve (ENOTFOUND)");
  });
});
