/**
 * The admission webhook server of `writ controller` (node:https on HOST:WRIT_WEBHOOK_PORT):
 * `POST /validate` (the ValidatingWebhookConfiguration) and `POST /screen` (the
 * MutatingWebhookConfiguration that refuses private key material before the API server's schema
 * check, and on CREATE adds the finalizer and the record-id annotation). Both take and answer an `admission.k8s.io/v1` AdmissionReview
 * (./review.ts decides).
 *
 * Promises:
 * - TLS from `<certDir>/tls.crt` and `<certDir>/tls.key` (a mounted Secret: cert-manager's or
 *   the chart's); the files are re-read when they change (checked every `reloadMs`), so a
 *   rotated certificate is served without a restart. A file that does not load keeps the
 *   previous certificate and is logged.
 * - Every replica serves it, leader or not (the Service spreads the API server's calls).
 * - A body over 8 MiB, or one that is not an AdmissionReview, is answered 400; a review that
 *   throws is answered `allowed: false` with the error (the API server then refuses, as
 *   failurePolicy Fail would).
 */
import { readFileSync, unwatchFile, watchFile } from "node:fs";
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { errorText, type Logger } from "../log.js";
import type { AdmissionPhase, AdmissionRequest, AdmissionVerdict } from "./review.js";

/** Options of the admission server. */
export interface AdmissionServerOptions {
  host: string;
  port: number;
  /** Folder holding tls.crt and tls.key. */
  certDir: string;
  review(req: AdmissionRequest, phase: AdmissionPhase): Promise<AdmissionVerdict>;
  log: Logger;
  /** How often the certificate files are checked for changes (default 10 s). */
  reloadMs?: number;
}

/** A running admission server. */
export interface AdmissionServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const MAX_BODY = 8 * 1024 * 1024;
const PATHS: Record<string, AdmissionPhase> = { "/validate": "validate", "/screen": "screen" };

function tlsFiles(certDir: string): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(join(certDir, "tls.crt")), key: readFileSync(join(certDir, "tls.key")) };
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** The AdmissionRequest of a review body, or undefined when it is not one. */
export function parseReview(text: string): AdmissionRequest | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const r = (body as { apiVersion?: unknown; kind?: unknown; request?: unknown } | null) ?? {};
  if (r.apiVersion !== "admission.k8s.io/v1" || r.kind !== "AdmissionReview") return undefined;
  const req = r.request as Partial<AdmissionRequest> | undefined;
  if (!req || typeof req.uid !== "string" || typeof req.operation !== "string" || typeof req.kind !== "object" || req.kind === null) return undefined;
  return req as AdmissionRequest;
}

/** The AdmissionReview answering `uid` with `verdict`. */
export function reviewResponse(uid: string, verdict: AdmissionVerdict): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: verdict.allowed };
  if (!verdict.allowed) response.status = { code: 422, reason: "Invalid", message: verdict.message ?? "refused" };
  if (verdict.warnings && verdict.warnings.length > 0) response.warnings = verdict.warnings;
  if (verdict.allowed && verdict.patch && verdict.patch.length > 0) {
    response.patchType = "JSONPatch";
    response.patch = Buffer.from(JSON.stringify(verdict.patch)).toString("base64");
  }
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response };
}

/** Starts the server; resolves once it listens. Throws when the certificate cannot be read. */
export async function startAdmissionServer(opts: AdmissionServerOptions): Promise<AdmissionServer> {
  const { log } = opts;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    };
    const phase = PATHS[(req.url ?? "/").split("?")[0] ?? "/"];
    if (!phase) return send(404, { error: "not found" });
    if (req.method !== "POST") return send(405, { error: "method not allowed" });
    const text = await readBody(req);
    if (text === undefined) return send(400, { error: "the body is over 8 MiB" });
    const review = parseReview(text);
    if (!review) return send(400, { error: "the body is not an admission.k8s.io/v1 AdmissionReview" });
    let verdict: AdmissionVerdict;
    try {
      verdict = await opts.review(review, phase);
    } catch (err) {
      log.error("admission review failed", { uid: review.uid, error: errorText(err) });
      verdict = { allowed: false, message: `the Writ admission webhook could not review this object: ${errorText(err)}` };
    }
    if (!verdict.allowed) {
      log.info("admission refused", {
        phase,
        kind: review.kind.kind,
        namespace: review.namespace,
        name: review.name,
        operation: review.operation,
        message: verdict.message,
      });
    }
    send(200, reviewResponse(review.uid, verdict));
  };

  const server = https.createServer({ ...tlsFiles(opts.certDir) }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error("admission request failed", { error: errorText(err) });
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const reload = () => {
    try {
      server.setSecureContext(tlsFiles(opts.certDir));
      log.info("admission webhook certificate reloaded", { certDir: opts.certDir });
    } catch (err) {
      log.warn("admission webhook certificate did not load; the previous one is served", { certDir: opts.certDir, error: errorText(err) });
    }
  };
  const watched = [join(opts.certDir, "tls.crt"), join(opts.certDir, "tls.key")];
  for (const f of watched) watchFile(f, { interval: opts.reloadMs ?? 10_000, persistent: false }, (cur, prev) => cur.mtimeMs !== prev.mtimeMs && reload());

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  return {
    url: `https://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((done) => {
        for (const f of watched) unwatchFile(f);
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
