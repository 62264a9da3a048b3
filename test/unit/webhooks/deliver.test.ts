import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LOOPBACK_OUTBOUND, STRICT_OUTBOUND } from "../../../src/http/outbound-address.js";
import type { Connect, Resolve } from "../../../src/http/outbound.js";
import { deliverOnce } from "../../../src/webhooks/deliver.js";

let server: Server;
let base = "";
const seen: { path: string; headers: IncomingMessage["headers"]; body: string }[] = [];
const hanging: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      seen.push({ path: req.url ?? "", headers: req.headers, body });
      if (req.url === "/ok") res.writeHead(204).end();
      else if (req.url === "/fail") res.writeHead(500, { "content-type": "text/plain" }).end("boom");
      else if (req.url === "/redirect") res.writeHead(302, { location: `${base}/ok` }).end();
      else if (req.url === "/hang") hanging.push(res);
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const r of hanging) r.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const input = (path: string, over: Partial<Parameters<typeof deliverOnce>[0]> = {}) => ({
  url: `${base}${path}`,
  body: '{"a":1}',
  eventId: "evt_1",
  attempt: 3,
  timeoutMs: 2000,
  policy: LOOPBACK_OUTBOUND,
  ...over,
});

describe("deliverOnce", () => {
  it("POSTs the body with the event and attempt headers; 2xx is success", async () => {
    expect(await deliverOnce(input("/ok"))).toEqual({ ok: true, status: 204 });
    const got = seen.at(-1);
    expect(got?.body).toBe('{"a":1}');
    expect(got?.headers["content-type"]).toBe("application/json");
    expect(got?.headers["x-writ-event-id"]).toBe("evt_1");
    expect(got?.headers["x-writ-delivery-attempt"]).toBe("3");
  });

  it("reports a non-2xx status as a failure", async () => {
    expect(await deliverOnce(input("/fail"))).toEqual({ ok: false, status: 500, error: "HTTP 500" });
  });

  it("does not follow redirects", async () => {
    const before = seen.length;
    const r = await deliverOnce(input("/redirect"));
    expect(r).toEqual({ ok: false, status: 302, error: "redirect not followed (HTTP 302)" });
    expect(seen.slice(before).map((s) => s.path)).toEqual(["/redirect"]);
  });

  it("ends a hanging request at the time limit", async () => {
    const t0 = Date.now();
    const r = await deliverOnce(input("/hang", { timeoutMs: 300 }));
    const took = Date.now() - t0;
    expect(r).toEqual({ ok: false, error: "timed out after 300 ms" });
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(2000);
  });

  it("stops at once when its signal aborts (shutdown)", async () => {
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 100);
    const t0 = Date.now();
    const r = await deliverOnce(input("/hang", { timeoutMs: 10_000, signal: ctl.signal }));
    expect(r).toMatchObject({ ok: false, aborted: true });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it("reports a refused connection and refuses non-http URLs without a request", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    expect(await deliverOnce(input("", { url: `http://127.0.0.1:${port}/x` }))).toEqual({ ok: false, error: "request failed: ECONNREFUSED" });
    expect(await deliverOnce(input("", { url: "file:///etc/passwd" }))).toEqual({ ok: false, error: "webhook_url is not http or https" });
    expect(await deliverOnce(input("", { url: "not a url" }))).toEqual({ ok: false, error: "webhook_url is not a URL" });
  });

  it("sends nothing where the outbound policy refuses: a failed attempt naming the reason", async () => {
    const before = seen.length;
    expect(await deliverOnce(input("/ok", { policy: STRICT_OUTBOUND }))).toEqual({
      ok: false,
      error: "destination refused by the outbound policy: 127.0.0.1 is a loopback address",
    });
    expect(seen.length).toBe(before);
  });

  it.each(["10.0.0.5", "169.254.169.254", "::ffff:127.0.0.1"])("refuses a host that resolves to %s without opening a socket", async (address) => {
    const resolve = vi.fn<Resolve>(async () => [{ address, family: address.includes(":") ? 6 : 4 }]);
    const connect = vi.fn<Connect>(() => {
      throw new Error("no socket may be opened");
    });
    const r = await deliverOnce(input("", { url: "https://hooks.example.test/in", policy: STRICT_OUTBOUND, net: { resolve, connect } }));
    expect(r.ok).toBe(false);
    expect(r.ok ? "" : r.error).toMatch(/^destination refused by the outbound policy: hooks\.example\.test resolves to /);
    expect(resolve).toHaveBeenCalledWith("hooks.example.test");
    expect(connect).not.toHaveBeenCalled();
  });
});
