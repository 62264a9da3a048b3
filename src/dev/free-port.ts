/**
 * A TCP port that is free right now on `host` (the OS picks it). Another process may take it
 * before the caller binds it; callers that can, listen on port 0 instead.
 */
import { createServer } from "node:net";

/** Asks the OS for a free port on `host` (default 127.0.0.1). */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", reject);
    srv.listen({ host, port: 0 }, () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error("no port assigned"))));
    });
  });
}

/** True when `host:port` cannot be bound now because something listens there (EADDRINUSE). */
export function portInUse(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", (e: NodeJS.ErrnoException) => (e.code === "EADDRINUSE" ? resolve(true) : reject(e)));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(false)));
  });
}
