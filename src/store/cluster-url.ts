/**
 * Multi-host connection URLs, as libpq writes them and node-postgres does not read:
 * `postgres://user:password@host1:5432,host2:5433/db?target_session_attrs=read-write`.
 *
 * Promise of `parseClusterUrl`: null for a URL node-postgres reads by itself (one host and no
 * `target_session_attrs`), so such a URL keeps working exactly as before; otherwise the hosts
 * in their order, the wanted session kind, and for each host a one-host URL (same user,
 * password, database and other parameters, `target_session_attrs` removed). Throws
 * `ClusterUrlError` for a host list or `target_session_attrs` it cannot read. Hosts may be
 * names, IPv4 addresses or bracketed IPv6 addresses; a host without a port takes the last
 * port given after it (libpq's `port=` list form is not read: write the ports in the hosts).
 */

/** libpq's `target_session_attrs` values. */
export const TARGET_SESSION_ATTRS = ["any", "read-write", "read-only", "primary", "standby", "prefer-standby"] as const;
/** Which server a connection of a cluster URL must reach. */
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

/** One host of a cluster URL (an IPv6 address without its brackets). */
export interface ClusterHost {
  readonly host: string;
  readonly port: number;
}

/** A parsed cluster URL. */
export interface ClusterUrl {
  readonly hosts: readonly ClusterHost[];
  readonly attrs: TargetSessionAttrs;
  /** A one-host URL for `hosts[i]` (no `target_session_attrs`). */
  urlFor(i: number): string;
}

/** A multi-host URL that cannot be read. */
export class ClusterUrlError extends Error {
  override readonly name = "ClusterUrlError";
}

const URL_SHAPE = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?$/;

function parseHost(part: string): { host: string; port?: number } {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(part);
  if (!m?.[1]) throw new ClusterUrlError(`"${part}" is not a host[:port]`);
  const port = m[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65535)) throw new ClusterUrlError(`port ${port} is out of range`);
  const host = m[1].startsWith("[") ? m[1].slice(1, -1) : m[1];
  return port === undefined ? { host } : { host, port };
}

/** Reads `url` (see the module comment). */
export function parseClusterUrl(url: string): ClusterUrl | null {
  const m = URL_SHAPE.exec(url.trim());
  if (!m) return null; // not a postgres:// URL: left to node-postgres
  const [, scheme = "postgres://", userinfo, authority = "", path = "", query = ""] = m;
  const params = new URLSearchParams(query.slice(1));
  const attrsText = params.get("target_session_attrs");
  const parts = authority.split(",");
  if (parts.length === 1 && attrsText === null) return null;
  let attrs: TargetSessionAttrs = "any";
  if (attrsText !== null) {
    if (!(TARGET_SESSION_ATTRS as readonly string[]).includes(attrsText)) {
      throw new ClusterUrlError(`target_session_attrs must be one of ${TARGET_SESSION_ATTRS.join(", ")}`);
    }
    attrs = attrsText as TargetSessionAttrs;
  }
  const read = parts.map((p) => parseHost(p.trim()));
  // libpq: a host without a port uses the default port; here the next port given after it.
  let fallback = 5432;
  const hosts: ClusterHost[] = new Array<ClusterHost>(read.length);
  for (let i = read.length - 1; i >= 0; i--) {
    const h = read[i] as { host: string; port?: number };
    if (h.port !== undefined) fallback = h.port;
    hosts[i] = { host: h.host, port: h.port ?? fallback };
  }
  params.delete("target_session_attrs");
  const rest = params.toString();
  const auth = userinfo === undefined ? "" : `${userinfo}@`;
  return {
    hosts,
    attrs,
    urlFor(i) {
      const h = hosts[i];
      if (!h) throw new RangeError(`no host ${i}`);
      const host = h.host.includes(":") ? `[${h.host}]` : h.host;
      return `${scheme}${auth}${host}:${h.port}${path}${rest ? `?${rest}` : ""}`;
    },
  };
}

/** `url` with its password replaced by `***` (for logs and error messages). */
export function redactUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/?#]*:)[^@/?#]*@/, "$1***@");
}
