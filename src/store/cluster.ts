/**
 * Connections to a replicated Postgres (Patroni, CloudNativePG, any primary with standbys)
 * named by a multi-host URL (./cluster-url.ts): every connection goes to the host that is the
 * wanted kind of server NOW, and follows a new primary after a failover without a restart.
 *
 * Why a resolver of our own: node-postgres reads one host per URL. The maintained drivers that
 * read libpq's host lists are either pg-native (libpq through a C addon: a toolchain and
 * libpq-dev on every machine, another driver under every query of the store, and it still does
 * not drop a pooled connection to a demoted primary) or another driver altogether (postgres.js,
 * a rewrite of every store module). What a pool needs is small: pick the host when a
 * connection is made, and drop connections that went to the wrong server. That is this file.
 *
 * How it works:
 * - One `HostResolver` per URL, shared by every connection of the process made from that URL
 *   (the pool, the LISTEN connections, the migration), remembers the host that last matched.
 * - A new connection goes to that host; without one, the resolver probes the hosts in their
 *   order (a short connection each: `pg_is_in_recovery()` and `transaction_read_only`, which
 *   is how libpq decides `target_session_attrs`) and remembers the first that matches. One
 *   probe runs at a time; connections waiting meanwhile share its answer. When no host
 *   matches, connections fail at once for `NO_MATCH_BACKOFF_MS` (the API answers 503) instead
 *   of probing again for every request.
 * - Every new connection checks, on itself, that the server is still the wanted kind (one
 *   round trip per new connection, not per query). A connection that fails to open or to
 *   match makes the resolver forget its host: the next connection probes again.
 * - Connections already open to a primary that is then demoted or killed fail on their next
 *   statement (Postgres ends them when it restarts as a standby; a write on a standby fails
 *   with 25006): ./db-errors.ts classes both as "database unavailable", the pool discards such
 *   a connection (./pool.ts) and the resolver forgets the host.
 * - Errors carry SQLSTATE 08001 (cannot establish connection) so the API answers 503.
 */
import pg from "pg";
import type { Client, ClientConfig } from "pg";
import { parseClusterUrl, type ClusterHost, type ClusterUrl, type TargetSessionAttrs } from "./cluster-url.js";

/** After a probe found no matching host, connections fail at once for this long (ms). */
export const NO_MATCH_BACKOFF_MS = 250;
/** Longest wait for one host during a probe (ms). */
export const PROBE_TIMEOUT_MS = 2000;

/** No host of a cluster URL is (reachable and) the wanted kind of server. */
export class NoMatchingHostError extends Error {
  override readonly name = "NoMatchingHostError";
  /** SQLSTATE 08001: sqlclient_unable_to_establish_sqlconnection (libpq's own choice). */
  readonly code = "08001";
}

/** The role a server reports. */
interface ServerRole {
  standby: boolean;
  readOnly: boolean;
}

const ROLE_SQL = "SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') = 'on' AS read_only";

async function readRole(c: Client): Promise<ServerRole> {
  const { rows } = await c.query<{ standby: boolean; read_only: boolean }>(ROLE_SQL);
  const r = rows[0];
  return { standby: r?.standby === true, readOnly: r?.read_only === true };
}

function matches(attrs: TargetSessionAttrs, role: ServerRole, pass: "preferred" | "fallback"): boolean {
  switch (attrs) {
    case "any":
      return true;
    case "read-write":
      return !role.readOnly;
    case "read-only":
      return role.readOnly;
    case "primary":
      return !role.standby;
    case "standby":
      return role.standby;
    case "prefer-standby":
      return pass === "fallback" || role.standby;
  }
}

/** Picks and remembers the host of a cluster URL (see the module comment). */
export class HostResolver {
  private current: number | null = null;
  private probing: Promise<number> | null = null;
  private noMatchUntil = 0;
  private noMatchError: Error | null = null;

  constructor(
    readonly url: ClusterUrl,
    private readonly probeTimeoutMs = PROBE_TIMEOUT_MS,
  ) {}

  /** The host remembered now (undefined when the next connection probes). */
  get remembered(): ClusterHost | undefined {
    return this.current === null ? undefined : this.url.hosts[this.current];
  }

  /** The index of the host a new connection goes to: the remembered one, or a probe's answer. */
  async pick(): Promise<number> {
    if (this.current !== null) return this.current;
    if (this.probing) return this.probing;
    if (Date.now() < this.noMatchUntil && this.noMatchError) throw this.noMatchError;
    this.probing = this.probe().finally(() => (this.probing = null));
    return this.probing;
  }

  /** True when `role` is a server this URL wants (any pass of prefer-standby). */
  accepts(role: ServerRole): boolean {
    return matches(this.url.attrs, role, "fallback");
  }

  /** Forgets host `i` (a connection to it failed or it is no longer the wanted kind). */
  forget(i: number): void {
    if (this.current === i) this.current = null;
  }

  /** Forgets whatever host is remembered. */
  forgetAll(): void {
    this.current = null;
  }

  private async probe(): Promise<number> {
    const seen: string[] = [];
    const roles = new Map<number, ServerRole>();
    for (const pass of this.url.attrs === "prefer-standby" ? (["preferred", "fallback"] as const) : (["preferred"] as const)) {
      for (let i = 0; i < this.url.hosts.length; i++) {
        let role = roles.get(i);
        if (!role && !seen[i]) {
          const h = this.url.hosts[i] as ClusterHost;
          const c = new pg.Client({ connectionString: this.url.urlFor(i), connectionTimeoutMillis: this.probeTimeoutMs, application_name: "writ-host-probe" });
          c.on("error", () => {});
          try {
            await c.connect();
            role = await readRole(c);
            roles.set(i, role);
          } catch (e) {
            seen[i] = `${h.host}:${h.port}: ${e instanceof Error ? e.message : String(e)}`;
          } finally {
            await c.end().catch(() => {});
          }
        }
        if (role && matches(this.url.attrs, role, pass)) {
          this.current = i;
          this.noMatchUntil = 0;
          this.noMatchError = null;
          return i;
        }
      }
    }
    const described = this.url.hosts.map((h, i) => seen[i] ?? `${h.host}:${h.port}: ${roles.get(i)?.standby ? "a standby" : "read-only"}`);
    const err = new NoMatchingHostError(`no host is a ${this.url.attrs} server: ${described.join("; ")}`);
    this.noMatchError = err;
    this.noMatchUntil = Date.now() + NO_MATCH_BACKOFF_MS;
    throw err;
  }
}

const resolvers = new Map<string, { parsed: ClusterUrl; resolver: HostResolver }>();

/** The resolver of a cluster URL (one per URL and process), or null for a one-host URL. */
export function resolverFor(url: string): HostResolver | null {
  const known = resolvers.get(url);
  if (known) return known.resolver;
  const parsed = parseClusterUrl(url);
  if (!parsed) return null;
  const resolver = new HostResolver(parsed);
  resolvers.set(url, { parsed, resolver });
  return resolver;
}

type ConnectCallback = ((err: Error) => void) | ((err: null, c: Client) => void);
type ClientClass = new (config?: string | ClientConfig) => Client;

/**
 * A pg Client class whose connections go where `resolver` says (see the module comment). It
 * takes the same config as pg's Client; host and port are chosen at `connect`.
 */
export function clusterClientClass(resolver: HostResolver): ClientClass {
  class ClusterClient extends pg.Client {
    override connect(): Promise<Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<Client> | void {
      const done = this.connectToPick().then(() => this as Client);
      if (!callback) return done;
      const cb = callback as (err: Error | null, c?: Client) => void;
      done.then(
        (c) => cb(null, c),
        (e: unknown) => cb(e instanceof Error ? e : new Error(String(e))),
      );
    }

    private async connectToPick(): Promise<void> {
      const i = await resolver.pick();
      const h = resolver.url.hosts[i] as ClusterHost;
      const self = this as unknown as {
        host: string;
        port: number;
        connectionParameters: { host: string; port: number };
        connection: { stream: { destroyed?: boolean } };
      };
      // A pool that gave up waiting (connectionTimeoutMillis) destroyed the socket meanwhile.
      if (self.connection.stream.destroyed) throw new NoMatchingHostError("timeout expired while the host was being picked");
      self.host = self.connectionParameters.host = h.host;
      self.port = self.connectionParameters.port = h.port;
      try {
        await super.connect();
        const role = await readRole(this);
        if (!resolver.accepts(role)) {
          await this.end().catch(() => {});
          throw new NoMatchingHostError(`${h.host}:${h.port} is no longer a ${resolver.url.attrs} server`);
        }
      } catch (e) {
        resolver.forget(i);
        throw e;
      }
    }
  }
  return ClusterClient as unknown as ClientClass;
}

/**
 * The pg config for connections to `url`: for a one-host URL `{connectionString: url}`; for a
 * cluster URL, the first host's URL plus `Client`, the class that picks the host (pg.Pool takes
 * it as is; `newClient` uses it).
 */
export function connectionConfig(url: string): ClientConfig & { Client?: ClientClass } {
  const resolver = resolverFor(url);
  if (!resolver) return { connectionString: url };
  return { connectionString: resolver.url.urlFor(0), Client: clusterClientClass(resolver) };
}

/**
 * A new (unconnected) client: for a string, `connectionConfig(url)`; for a config holding a
 * `Client` class (a pool's options), that class; otherwise pg's Client.
 */
export function newClient(connection: string | (ClientConfig & { Client?: unknown }), extra: ClientConfig = {}): Client {
  const config = typeof connection === "string" ? connectionConfig(connection) : connection;
  const { Client: Cls, ...rest } = config as ClientConfig & { Client?: unknown };
  const C = typeof Cls === "function" ? (Cls as ClientClass) : (pg.Client as unknown as ClientClass);
  return new C({ ...rest, ...extra });
}
