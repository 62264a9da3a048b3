/**
 * The typed client of the Writ API: openapi-fetch over the types generated from the server's own
 * /openapi.json (./schema.ts, `npm run gen:client`; a test regenerates them from a running
 * server and fails when this copy is stale, so the client cannot drift from the server). The
 * CLI's `writ verify` and `writ inquire` call through it, and so do the tests of the README's
 * agent loop.
 *
 * ```ts
 * import { createWritClient } from "writ/client";
 * const writ = createWritClient({ server: "http://127.0.0.1:8080", token: process.env.WRIT_API_KEY });
 * const { data, error } = await writ.POST("/v1/verify", { body: { agent_id: "agent_demo", action } });
 * ```
 *
 * Every call answers `{data}` (a success, typed from the route's schema) or `{error}` (`{error:
 * string}`), with `response` for the status; only a network failure throws. The credential is
 * sent as `Authorization: Bearer <token>` on every call of the client: an organization API key
 * (`bur_…`), a portal session (`bps_…`), the admin or the append token.
 */
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/** A Writ client (openapi-fetch's, typed with the API's paths). */
export type WritClient = Client<paths>;

/** Options of `createWritClient`. */
export interface WritClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  server: string | URL;
  /** The bearer credential sent with every call, if any. */
  token?: string;
  /** The fetch to use (default the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/** A client of the server at `opts.server` (see the module comment). */
export function createWritClient(opts: WritClientOptions): WritClient {
  return createClient<paths>({
    baseUrl: String(opts.server).replace(/\/+$/, ""),
    headers: { accept: "application/json", ...(opts.token !== undefined ? { authorization: `Bearer ${opts.token}` } : {}) },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

/** The JSON body of a request to `P` with `M` (e.g. `RequestBody<"/v1/verify", "post">`). */
export type RequestBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { "application/json": infer B } } }
  ? B
  : never;

/** The JSON answer of `P` with `M` for status `S` (default 200). */
export type Answer<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = paths[P][M] extends {
  responses: { [K in S]: { content: { "application/json": infer A } } };
}
  ? A
  : never;

/** The answer of `POST /v1/verify`. */
export type VerifyAnswer = Answer<"/v1/verify", "post">;
/** The answer of `GET /v1/agreements/{agreement_id}`, with its budget. */
export type AgreementAnswer = Answer<"/v1/agreements/{agreement_id}", "get">;

export {
  KeyDirectoryCache,
  KeyDirectoryError,
  MemoryNonceStore,
  keyDirectoryUrl,
  signAgentRequest,
  verifyAgentRequest,
  type AgentRequestCheck,
  type DirectoryKey,
  type HttpRequestLike,
  type KeyDirectory,
  type KeyDirectoryCacheOptions,
  type NonceStore,
  type SignAgentRequestOptions,
  type SignatureFacts,
  type SignatureFields,
  type VerifyAgentRequestOptions,
} from "./agent-requests.js";
