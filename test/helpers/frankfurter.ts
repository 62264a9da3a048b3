/**
 * A local stand-in for a Frankfurter v1 server (node:http on 127.0.0.1, port 0) for tests.
 *
 * It answers `GET /{YYYY-MM-DD}?base=XXX&symbols=YYY` like Frankfurter: the latest day in its
 * table on or before the day asked (any currency: like the real service, a weekend carries the
 * previous publication), `{"amount":1.0,"base":..,"date":..,"rates":{YYY:<rate>}}` with the
 * rate text written RAW into the body (so "1.10" or "6.1e-05" reach the client exactly), or
 * 404 `{"message":"not found"}` when that day has no such pair. It can be told to hang (accept
 * and never answer), fail (500), answer 404 for everything, or answer a fixed raw body; it
 * counts requests and records their URLs.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** How the stand-in answers. */
export type StandInMode = "normal" | "hang" | "fail" | "notFound" | { raw: string; status?: number };

/** A running stand-in. */
export interface FrankfurterStandIn {
  /** Base URL, e.g. `http://127.0.0.1:41234` (use as SVC_FX_SOURCE_URL). */
  readonly url: string;
  /** Publishes `rate` (raw JSON number text) of `base` in `symbol` on `day`. */
  setRate(day: string, base: string, symbol: string, rate: string): void;
  /** Changes how requests are answered. */
  setMode(mode: StandInMode): void;
  /** Requests received so far. */
  readonly calls: number;
  /** Path and query of every request received, in order. */
  readonly requests: readonly string[];
  /** Forgets the counted calls and recorded requests. */
  resetCalls(): void;
  close(): Promise<void>;
}

const DAY_PATH = /^\/(\d{4}-\d{2}-\d{2})$/;

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(body);
}

/** Starts a stand-in. */
export async function startFrankfurter(): Promise<FrankfurterStandIn> {
  // day -> "BASE/SYMBOL" -> raw rate text
  const table = new Map<string, Map<string, string>>();
  let mode: StandInMode = "normal";
  const requests: string[] = [];
  const sockets = new Set<Socket>();

  function answer(req: IncomingMessage, res: ServerResponse): void {
    const u = new URL(req.url ?? "/", "http://stand-in");
    const m = DAY_PATH.exec(u.pathname);
    const base = u.searchParams.get("base") ?? "EUR";
    const symbol = u.searchParams.get("symbols");
    if (!m || !symbol) return send(res, 422, '{"message":"bad request"}');
    const asked = m[1] as string;
    const day = [...table.keys()]
      .filter((d) => d <= asked)
      .sort()
      .at(-1);
    const rate = day === undefined ? undefined : table.get(day)?.get(`${base}/${symbol}`);
    if (day === undefined || rate === undefined) return send(res, 404, '{"message":"not found"}');
    send(res, 200, `{"amount":1.0,"base":${JSON.stringify(base)},"date":"${day}","rates":{${JSON.stringify(symbol)}:${rate}}}`);
  }

  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    if (mode === "hang") return; // never answers; close() destroys the socket
    if (mode === "fail") return send(res, 500, '{"message":"internal error"}');
    if (mode === "notFound") return send(res, 404, '{"message":"not found"}');
    if (typeof mode === "object") return send(res, mode.status ?? 200, mode.raw);
    answer(req, res);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | null = null;

  return {
    url: `http://127.0.0.1:${port}`,
    setRate(day, base, symbol, rate) {
      let d = table.get(day);
      if (!d) table.set(day, (d = new Map()));
      d.set(`${base}/${symbol}`, rate);
    },
    setMode(m) {
      mode = m;
    },
    get calls() {
      return requests.length;
    },
    get requests() {
      return requests;
    },
    resetCalls() {
      requests.length = 0;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}
