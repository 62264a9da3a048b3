/**
 * The one way the service makes an HTTP request to a destination chosen by input: webhook
 * delivery (src/webhooks), an acknowledgement domain's key list (src/verify) and the rate
 * source (src/fx).
 *
 * Promises:
 * - The destination is checked AT CONNECT TIME against the outbound policy
 *   (./outbound-address.ts): the host name is resolved, EVERY address it resolves to must pass,
 *   and the socket is opened to one of exactly those addresses (never resolved again), so a
 *   name that answers a public address to a check and a private one to the connection (DNS
 *   rebinding) cannot pass. An IP literal is checked as it is. A refused destination is an
 *   `OutboundError` REFUSED and no socket is opened at all.
 * - Connecting (resolution, TCP, TLS) ends within `connectTimeoutMs`, the whole exchange
 *   within `timeoutMs`, or at once when `signal` aborts; nothing is left open afterwards (one
 *   connection per request, `connection: close`).
 * - Redirects are never followed (a 3xx is an answer like any other). At most `maxBodyBytes`
 *   of the answer are read (more is TOO_LARGE); 0 reads none (the status is the answer).
 * - Only http: and https: URLs without credentials are requested.
 * The resolver and the socket opener are injectable, so tests prove a refusal opened nothing.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import net from "node:net";
import tls from "node:tls";
import { refusal, type OutboundPolicy } from "./outbound-address.js";

/** Stable codes of an outbound failure. */
export type OutboundErrorCode = "BAD_URL" | "REFUSED" | "DNS" | "CONNECT_TIMEOUT" | "TIMEOUT" | "ABORTED" | "TOO_LARGE" | "NETWORK";

/** An outbound request that gave no answer; `code` says why, the message is secret-free. */
export class OutboundError extends Error {
  override readonly name = "OutboundError";
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses. */
export type Resolve = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** Where a socket is opened: an address already checked, never a name. */
export interface ConnectTarget {
  host: string;
  port: number;
  tls: boolean;
  /** The TLS server name (SNI and certificate check): the URL's host name. */
  servername?: string;
}

/** Opens a socket (TLS when `target.tls`); the caller waits for connect / secureConnect. */
export type Connect = (target: ConnectTarget) => net.Socket;

/** The system resolver (getaddrinfo, as node's own connections use), every address. */
export const resolveHost: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Opens a TCP or TLS socket to a checked address. */
export const connectSocket: Connect = (t) =>
  t.tls
    ? tls.connect({ host: t.host, port: t.port, ...(t.servername !== undefined ? { servername: t.servername } : {}), ALPNProtocols: ["http/1.1"] })
    : net.connect({ host: t.host, port: t.port });

/** Replaceable parts (tests). */
export interface OutboundDeps {
  resolve?: Resolve;
  connect?: Connect;
}

/** One request. */
export interface OutboundRequest {
  url: string | URL;
  method?: "GET" | "POST";
  headers?: Readonly<Record<string, string>>;
  body?: string;
  /** The whole exchange: connection, request, answer. */
  timeoutMs: number;
  /** Resolution, TCP and TLS (default and at most `timeoutMs`). */
  connectTimeoutMs?: number;
  signal?: AbortSignal;
  /** Largest answer body read; 0: the body is not read. */
  maxBodyBytes: number;
}

/** An answer. */
export interface OutboundAnswer {
  status: number;
  /** The body as UTF-8 text ("" when not read). */
  body: string;
}

function parseTarget(input: string | URL): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new OutboundError("BAD_URL", "not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new OutboundError("BAD_URL", "not http or https");
  if (url.username !== "" || url.password !== "") throw new OutboundError("BAD_URL", "the URL carries credentials");
  return url;
}

/** The host of `url` without IPv6 brackets. */
function bareHost(url: URL): string {
  const h = url.hostname;
  return h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h;
}

/** The addresses `url`'s host stands for, every one allowed by `policy`; throws REFUSED or DNS. */
async function checkedAddresses(url: URL, policy: OutboundPolicy, resolve: Resolve = resolveHost): Promise<readonly ResolvedAddress[]> {
  const host = bareHost(url);
  const family = net.isIP(host);
  let addresses: readonly ResolvedAddress[];
  if (family !== 0) addresses = [{ address: host, family }];
  else {
    try {
      addresses = await resolve(host);
    } catch (e) {
      const code = (e as { code?: unknown } | null)?.code;
      throw new OutboundError("DNS", `${host} did not resolve${typeof code === "string" ? ` (${code})` : ""}`);
    }
    if (addresses.length === 0) throw new OutboundError("DNS", `${host} did not resolve`);
  }
  for (const a of addresses) {
    const no = refusal(policy, a.address);
    if (no === null) continue;
    const what = no.class === "not-an-address" ? "not an IP address" : `a ${no.class} address`;
    throw new OutboundError(
      "REFUSED",
      `destination refused by the outbound policy: ${family !== 0 ? `${no.address} is ${what}` : `${host} resolves to ${no.address}, ${what}`}`,
    );
  }
  return addresses;
}

function describeNetwork(e: unknown): OutboundError {
  if (e instanceof OutboundError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string") return new OutboundError("NETWORK", code);
  return new OutboundError("NETWORK", (e instanceof Error ? e.message : String(e)).slice(0, 200));
}

/** Sends one request (see the module comment); resolves with the answer or rejects with an OutboundError. */
export function outboundRequest(policy: OutboundPolicy, req: OutboundRequest, deps: OutboundDeps = {}): Promise<OutboundAnswer> {
  return new Promise<OutboundAnswer>((resolve, reject) => {
    let url: URL;
    try {
      url = parseTarget(req.url);
    } catch (e) {
      reject(e instanceof OutboundError ? e : describeNetwork(e));
      return;
    }
    let done = false;
    let socket: net.Socket | undefined;
    let request: http.ClientRequest | undefined;
    const timers: NodeJS.Timeout[] = [];
    const finish = (err: OutboundError | null, answer?: OutboundAnswer) => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      req.signal?.removeEventListener("abort", onAbort);
      request?.destroy();
      socket?.destroy();
      if (err) reject(err);
      else resolve(answer as OutboundAnswer);
    };
    const onAbort = () => finish(new OutboundError("ABORTED", "the request was aborted"));
    if (req.signal?.aborted) return onAbort();
    req.signal?.addEventListener("abort", onAbort, { once: true });
    timers.push(setTimeout(() => finish(new OutboundError("TIMEOUT", `no answer within ${req.timeoutMs} ms`)), req.timeoutMs));
    const connectMs = Math.min(req.connectTimeoutMs ?? req.timeoutMs, req.timeoutMs);
    const connectTimer = setTimeout(() => finish(new OutboundError("CONNECT_TIMEOUT", `no connection within ${connectMs} ms`)), connectMs);
    timers.push(connectTimer);

    const open = async (): Promise<net.Socket> => {
      const addresses = await checkedAddresses(url, policy, deps.resolve);
      const host = bareHost(url);
      const https = url.protocol === "https:";
      const port = url.port !== "" ? Number(url.port) : https ? 443 : 80;
      let last: unknown;
      // Each address in the resolver's order until one connects (an unreachable IPv6 first).
      for (const a of addresses) {
        if (done) break;
        try {
          return await new Promise<net.Socket>((ok, fail) => {
            const s = (deps.connect ?? connectSocket)({ host: a.address, port, tls: https, ...(https && net.isIP(host) === 0 ? { servername: host } : {}) });
            socket = s;
            s.on("error", fail);
            s.once(https ? "secureConnect" : "connect", () => {
              s.removeListener("error", fail);
              ok(s);
            });
          });
        } catch (e) {
          socket?.destroy();
          last = e;
        }
      }
      throw describeNetwork(last ?? new Error("no address to connect to"));
    };

    open().then(
      (s) => {
        if (done) return void s.destroy();
        clearTimeout(connectTimer);
        s.on("error", () => {}); // the request below reports socket errors
        const headers: Record<string, string> = { ...req.headers, host: url.host, connection: "close" };
        if (req.body !== undefined) headers["content-length"] = String(Buffer.byteLength(req.body));
        request = http.request({ method: req.method ?? "GET", path: `${url.pathname}${url.search}`, headers, setHost: false, createConnection: () => s });
        request.on("error", (e) => finish(describeNetwork(e)));
        request.on("response", (res) => {
          const status = res.statusCode ?? 0;
          if (req.maxBodyBytes === 0) return finish(null, { status, body: "" });
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.byteLength;
            if (size > req.maxBodyBytes) finish(new OutboundError("TOO_LARGE", `the answer is larger than ${req.maxBodyBytes} bytes`));
            else chunks.push(chunk);
          });
          res.on("end", () => finish(null, { status, body: Buffer.concat(chunks).toString("utf8") }));
          res.on("error", (e) => finish(describeNetwork(e)));
          res.on("close", () => finish(new OutboundError("NETWORK", "the connection closed before the answer ended")));
        });
        request.end(req.body);
      },
      (e: unknown) => finish(describeNetwork(e)),
    );
  });
}
