/**
 * A TCP proxy on 127.0.0.1 for partition tests: it forwards every connection to `target` until
 * `cut()`, which destroys the connections it carries and refuses new ones (they are accepted and
 * closed at once, as an unreachable peer behind a load balancer looks), until `restore()`.
 */
import net from "node:net";
import type { AddressInfo } from "node:net";

/** A running proxy. */
export interface TcpProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /** Drops every connection and refuses new ones. */
  cut(): void;
  /** Forwards again. */
  restore(): void;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (host and port); `onRefused` hears of each connection refused while cut. */
export async function startTcpProxy(target: { host: string; port: number }, opts: { onRefused?: () => void } = {}): Promise<TcpProxy> {
  const live = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) {
      client.destroy();
      opts.onRefused?.();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      live.add(s);
      s.on("close", () => live.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      open = false;
      for (const s of live) s.destroy();
    },
    restore() {
      open = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of live) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** `url` (postgres://...) with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.hostname = "127.0.0.1";
  u.port = String(proxy.port);
  return u.toString();
}
