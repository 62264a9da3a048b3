/**
 * What the request log records of a request: Fastify's default fields, with the value of every
 * query parameter that can carry a credential replaced by `[redacted]`.
 *
 * Why: sign-in links carry their token in the URL fragment, which never reaches a server; but
 * a link pasted by hand as `?token=`, or any future route that takes a credential in its query,
 * must not put it in the log. Bodies and headers are never logged.
 */
import type { FastifyRequest } from "fastify";

/** Query parameter names whose values are never logged (compared in lower case). */
export const REDACTED_QUERY_PARAMS: ReadonlySet<string> = new Set(["token", "session_token", "access_token", "code", "key", "secret"]);

/** `url` with the values of REDACTED_QUERY_PARAMS replaced (and any fragment dropped). */
export function redactUrl(url: string): string {
  const hash = url.indexOf("#");
  const bare = hash < 0 ? url : url.slice(0, hash);
  const q = bare.indexOf("?");
  if (q < 0) return bare;
  const query = bare
    .slice(q + 1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      const raw = eq < 0 ? pair : pair.slice(0, eq);
      let name = raw;
      try {
        name = decodeURIComponent(raw.replace(/\+/g, " "));
      } catch {
        // a malformed escape: compare the raw text
      }
      return eq >= 0 && REDACTED_QUERY_PARAMS.has(name.toLowerCase()) ? `${raw}=[redacted]` : pair;
    })
    .join("&");
  return `${bare.slice(0, q)}?${query}`;
}

/** The `req` serializer of the request logger (Fastify's fields, the URL redacted). */
export function serializeRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
