/**
 * HTTP for the verbs: JSON requests with a timeout (plain, or through the typed client of
 * src/client for the API's own routes), answers as `{status, body}`, and failures
 * that say what to do. A network failure is a CliError NETWORK; an answer that is not JSON is
 * SERVER_ERROR. Credentials are sent only as an `Authorization: Bearer` header and never
 * appear in a message.
 */
import { createWritClient, type WritClient } from "../client/index.js";
import { CliError } from "./errors.js";
import type { CliIo } from "./io.js";

/** Default time a request may take. */
export const REQUEST_TIMEOUT_MS = 15_000;

/** A JSON answer. */
export interface JsonAnswer {
  status: number;
  body: unknown;
}

/** Options of one request. */
export interface RequestOptions {
  method?: "GET" | "POST";
  body?: unknown;
  bearer?: string;
  timeoutMs?: number;
}

/** `path` (with its query) under the server's base URL. */
export function endpoint(server: URL, path: string): URL {
  const base = server.href.replace(/\/+$/, "");
  return new URL(`${base}${path}`);
}

/** Sends one request and reads its JSON answer. */
export async function requestJson(io: CliIo, url: URL, opts: RequestOptions = {}): Promise<JsonAnswer> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (opts.bearer !== undefined) headers.authorization = `Bearer ${opts.bearer}`;
  let response: Response;
  try {
    response = await io.fetch(url, {
      method: opts.method ?? "GET",
      headers,
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      signal: AbortSignal.timeout(opts.timeoutMs ?? REQUEST_TIMEOUT_MS),
    });
  } catch (e) {
    const cause = e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
    throw new CliError("NETWORK", `cannot reach ${url.origin}${url.pathname}: ${cause}; check --server and that the server is running`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === "" ? {} : JSON.parse(text);
  } catch {
    throw new CliError("SERVER_ERROR", `${url.pathname} answered ${response.status} with a body that is not JSON; is --server a Writ server?`);
  }
  return { status: response.status, body };
}

/** The `error` text of an error answer, or the status. */
export function errorText(answer: JsonAnswer): string {
  const b = answer.body as { error?: unknown } | null;
  return typeof b?.error === "string" ? `${answer.status} ${b.error}` : `status ${answer.status}`;
}

/** A client of the typed API (src/client) for `server`, sending `token`, through the verb's fetch. */
export function apiClient(io: CliIo, server: URL, token?: string): WritClient {
  return createWritClient({ server, ...(token !== undefined ? { token } : {}), fetch: (request) => io.fetch(request) });
}

/**
 * Runs one call of the typed client with the request timeout and reads it as a JSON answer: a
 * network failure is a CliError NETWORK and an answer that is not JSON SERVER_ERROR, as with
 * `requestJson`. `path` names the call in messages.
 */
export async function callApi(
  server: URL,
  path: string,
  call: (init: { signal: AbortSignal }) => Promise<{ data?: unknown; error?: unknown; response: Response }>,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<JsonAnswer> {
  let r: { data?: unknown; error?: unknown; response: Response };
  try {
    r = await call({ signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    if (e instanceof SyntaxError) throw new CliError("SERVER_ERROR", `${path} answered with a body that is not JSON; is --server a Writ server?`);
    const cause = e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
    throw new CliError(
      "NETWORK",
      `cannot reach ${endpoint(server, path).origin}${endpoint(server, path).pathname}: ${cause}; check --server and that the server is running`,
    );
  }
  const body = r.data ?? r.error ?? {};
  // openapi-fetch hands an error answer that is not JSON over as its text.
  if (typeof body !== "object")
    throw new CliError("SERVER_ERROR", `${path} answered ${r.response.status} with a body that is not JSON; is --server a Writ server?`);
  return { status: r.response.status, body };
}
