/**
 * `writ dev`'s webhook receiver: a tiny HTTP server on 127.0.0.1 that the sample Subscription
 * delivers to (its URL is in the banner and in the rendered `.writ/samples/` Subscription). It
 * accepts any POST, checks the alert's signature with the log signing key (`verifyAlert`,
 * docs/webhooks.md), appends one JSON line per delivery to its log file (`.writ/webhooks.log`:
 * time, path, event id, type, agent, attempt, and whether the signature verified or why not),
 * prints one line per delivery, and answers 204 (400 to a body that is not JSON; 405 to
 * anything but POST). It listens on the sample port (SAMPLE_WEBHOOK_URL, 8089) when that is
 * free, else on a free port.
 */
import { appendFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SAMPLE_WEBHOOK_URL } from "../core/samples/index.js";
import { ATTEMPT_HEADER, verifyAlert } from "../webhooks/index.js";

/** The largest body the receiver reads. */
const MAX_BODY = 1024 * 1024;

/** A running receiver. */
export interface WebhookReceiver {
  /** The URL to deliver to (`http://127.0.0.1:<port>/writ/alerts`). */
  url: string;
  /** The file deliveries are logged to, one JSON line each. */
  logFile: string;
  close(): Promise<void>;
}

/** Options of `startWebhookReceiver`. */
export interface WebhookReceiverOptions {
  logFile: string;
  /** The log signing key's public JWK (the key alerts are signed with); absent: not checked. */
  publicJwk: Record<string, unknown> | undefined;
  print(line: string): void;
  /** The port to try first (default: SAMPLE_WEBHOOK_URL's); 0: a free one. */
  port?: number;
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on("end", () => resolveBody(size > MAX_BODY ? undefined : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function listen(server: Server, port: number): Promise<boolean> {
  return new Promise((resolveListen, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      if (e.code === "EADDRINUSE" || e.code === "EACCES") resolveListen(false);
      else reject(e);
    };
    const onListening = () => {
      server.off("error", onError);
      resolveListen(true);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, "127.0.0.1");
  });
}

/** Starts the receiver (see the module comment). */
export async function startWebhookReceiver(opts: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const path = new URL(SAMPLE_WEBHOOK_URL).pathname;
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== "POST") {
        res.writeHead(405, { allow: "POST", "content-type": "application/json" }).end(JSON.stringify({ error: "the webhook receiver accepts POST only" }));
        return;
      }
      const text = await readBody(req);
      let body: unknown;
      try {
        body = text === undefined ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (body === undefined) {
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: "body must be a JSON alert of at most 1 MiB" }));
        return;
      }
      let signature: string;
      if (!opts.publicJwk) signature = "not checked (no log signing key)";
      else {
        try {
          await verifyAlert(body, opts.publicJwk);
          signature = "verified";
        } catch (e) {
          signature = `NOT verified: ${e instanceof Error ? e.message : String(e)}`;
        }
      }
      const b = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
      const entry = {
        received_at: new Date().toISOString(),
        path: req.url ?? "/",
        event_id: b.event_id,
        type: b.type,
        agent_id: b.agent_id,
        subscription_id: b.subscription_id,
        attempt: req.headers[ATTEMPT_HEADER],
        signature,
        body,
      };
      await appendFile(opts.logFile, `${JSON.stringify(entry)}\n`);
      opts.print(
        `webhook received: ${String(b.type)} about ${String(b.agent_id)} (event ${String(b.event_id)}), signature ${signature}; logged to ${opts.logFile}`,
      );
      res.writeHead(204).end();
    })().catch((e: unknown) => {
      opts.print(`webhook receiver: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const preferred = opts.port ?? Number(new URL(SAMPLE_WEBHOOK_URL).port);
  if (!(await listen(server, preferred)) && !(await listen(server, 0))) throw new Error("webhook receiver: no port to listen on");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    logFile: opts.logFile,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}
