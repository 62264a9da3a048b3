/**
 * A tiny local HTTP stand-in for the data plane: records each request (method, path, headers,
 * JSON body) and answers with what the test sets.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One received request. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A running stand-in. */
export interface StandIn {
  url: string;
  received: Received[];
  answer: { status: number; body: unknown };
  close(): Promise<void>;
}

/** Starts a stand-in on 127.0.0.1, port 0. */
export async function startStandIn(): Promise<StandIn> {
  const state: StandIn = { url: "", received: [], answer: { status: 200, body: {} }, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString("utf8")));
    req.on("end", () => {
      state.received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: text === "" ? undefined : JSON.parse(text) });
      res.writeHead(state.answer.status, { "content-type": "application/json" });
      res.end(JSON.stringify(state.answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
