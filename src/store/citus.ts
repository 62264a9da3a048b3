/**
 * Writ on a Citus cluster (docs/scale.md): after the migrations, on a database where the `citus`
 * extension is installed and which is the cluster's coordinator, the tables are laid out: one
 * agent, one shard. On plain Postgres (no `citus` extension) nothing happens: the same migrations
 * and code run on both.
 *
 * - `CITUS_DISTRIBUTED_TABLES`, every per-agent table, are distributed by `agent_id` in one
 *   co-location group (`delegations`' ): an agent's delegations, agreements, ledger heads and
 *   entries, open holds, spend totals, period counters and events, stored answers and mandates
 *   are on one worker, so a statement naming one agent is a router plan on that worker.
 * - `CITUS_REFERENCE_TABLES`, the small shared tables the per-agent ones are linked to or read
 *   with (organizations, API keys, agents, issuer and acknowledgement keys, exchange rates, the
 *   revocation markers, the pushed revocations), get a copy on every node.
 * - Every other table stays a table of the coordinator (the transparency log, the webhook outbox,
 *   the claim tables, the portal): not on the ALLOW path. One linked to a reference table by a
 *   foreign key is made a "Citus local table" by Citus itself (still on the coordinator).
 * - Writ's SQL functions (src/store/sql/functions/) are made distributed objects, so that a
 *   trigger of a shard finds its function on the worker, and every later `CREATE OR REPLACE`
 *   (each `migrate`) reaches the workers too.
 *
 * Foreign keys: Citus refuses a key from a local table to a distributed one, so the keys between
 * the tables laid out here are dropped first and added back (the same definitions) once every
 * table is distributed or a reference table, in the same transaction (sequential: Citus refuses
 * a reference-table change after a parallel operation on a distributed table in one
 * transaction). Triggers: the per-agent tables' touch only their own row and the reference
 * tables' notify from the coordinator's copy only (migrations 0350, 0510); Citus wants
 * `citus.enable_unsafe_triggers` to accept them.
 *
 * Setting: WRIT_CITUS = `auto` (default: lay the tables out when Citus is there), `off` (never:
 * the tables stay plain local tables even on a Citus coordinator).
 */
import pg from "pg";
import type { ClientBase, ClientConfig, Pool } from "pg";
import { ensureDecisionPartitionsAhead, partitionDecisions, type DecisionPartitions } from "./citus-partitions.js";

/** The per-agent tables, distributed by agent_id and co-located with `delegations` (the first). */
export const CITUS_DISTRIBUTED_TABLES = [
  "delegations",
  "agreements",
  "agreement_ledger_heads",
  "ledger_entries",
  "ledger_open_holds",
  "agreement_spend",
  "delegation_spend",
  "period_spend",
  "period_events",
  "verify_decisions",
  "mandates",
] as const;

/**
 * The spend functions of one agent's batch, distributed by their first argument (the agent,
 * `p_agent`) and co-located with `delegations`, with `force_delegation`: a call from the
 * coordinator, even inside the spend's transaction, runs whole on the worker holding the agent's
 * shards (one round trip; its statements planned and run there, on local shards), instead of the
 * coordinator planning and sending each of its statements. sql/functions/writ_spend_read_citus.sql
 * and writ_spend_write_citus.sql call them for a batch that touches nothing of another agent.
 */
export const CITUS_DELEGATED_FUNCTIONS = ["writ_spend_read_agent(text,text[],text[],jsonb)", "writ_spend_write_agent(text,jsonb)"] as const;

/**
 * Functions that keep their generic plans on a Citus cluster: their statements read Citus's
 * catalog (pg_dist_placement, pg_dist_shard, pg_description), never a distributed table, so
 * Citus has nothing to plan with parameters' values (sql/functions/writ_citus_local_fn.sql: on
 * every spend transaction a worker runs).
 */
export const CITUS_GENERIC_FUNCTIONS = ["writ_citus_local_fn"] as const;

/** The shared tables with a copy on every node. */
export const CITUS_REFERENCE_TABLES = ["orgs", "api_keys", "agents", "issuer_keys", "ack_keys", "fx_rates", "delegation_revocations", "revocations"] as const;

/** WRIT_CITUS. */
export type CitusMode = "auto" | "off";

/** WRIT_CITUS of `env`; an unknown value throws (it names the variable and what it accepts). */
export function citusModeFromEnv(env: NodeJS.ProcessEnv): CitusMode {
  const raw = env.WRIT_CITUS?.trim();
  if (raw === undefined || raw === "" || raw === "auto") return "auto";
  if (raw === "off") return "off";
  throw new Error(`WRIT_CITUS must be auto or off, not ${JSON.stringify(raw.slice(0, 40))}`);
}

/** What `applyCitusLayout` found and did. */
export interface CitusLayout {
  /** The citus extension's version in this database, or null (plain Postgres). */
  citus: string | null;
  /** Whether this database is the cluster's coordinator (false without Citus). */
  coordinator: boolean;
  /** Tables made reference tables by this call. */
  madeReference: string[];
  /** Tables distributed by agent_id by this call. */
  distributed: string[];
  /** Whether this call made verify_decisions a table partitioned by week (src/store/citus-partitions.ts). */
  partitionedDecisions?: boolean;
}

/** Writ's functions as `regprocedure` texts (every function of the public schema whose name is Writ's). */
const WRIT_FUNCTIONS_SQL = `SELECT p.oid::regprocedure::text AS f FROM pg_proc p
  WHERE p.pronamespace = 'public'::regnamespace AND (p.proname LIKE 'writ\\_%' OR p.proname LIKE 'registry\\_%')
    AND NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid)
  ORDER BY 1`;

/**
 * Lays the tables out (see the module comment) when Citus is installed here and this is the
 * coordinator; tables already laid out (a second process, a restart) are left as they are. Runs
 * in one transaction on `client` (the caller holds the migration lock).
 */
export async function applyCitusLayout(client: ClientBase, mode: CitusMode, decisionPartitions: DecisionPartitions = "off"): Promise<CitusLayout> {
  const { rows } = await client.query<{ v: string | null }>("SELECT (SELECT extversion FROM pg_extension WHERE extname = 'citus') AS v");
  const citus = rows[0]?.v ?? null;
  if (citus === null || mode === "off") return { citus, coordinator: false, madeReference: [], distributed: [] };
  const coord = await client.query<{ c: boolean }>("SELECT citus_is_coordinator() AS c");
  if (coord.rows[0]?.c !== true) return { citus, coordinator: false, madeReference: [], distributed: [] };
  const madeReference: string[] = [];
  const distributed: string[] = [];
  let partitionedDecisions = false;
  await client.query("BEGIN");
  try {
    await client.query("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'");
    await client.query("SET LOCAL citus.enable_unsafe_triggers TO on");
    // verify_decisions by week, before it is distributed (its partitions are distributed with it).
    partitionedDecisions = decisionPartitions === "week" && (await partitionDecisions(client));
    // Already partitioned (a restart): the partitions ahead, as a retention pass makes them.
    if (!partitionedDecisions) await ensureDecisionPartitionsAhead(client);
    const laidOut = new Set(
      (await client.query<{ t: string }>("SELECT logicalrelid::regclass::text AS t FROM pg_dist_partition WHERE partmethod IN ('h', 'n')")).rows.map(
        (r) => r.t,
      ),
    );
    const pendingRef = CITUS_REFERENCE_TABLES.filter((t) => !laidOut.has(t));
    const pendingDist = CITUS_DISTRIBUTED_TABLES.filter((t) => !laidOut.has(t));
    for (const { f } of (await client.query<{ f: string }>(WRIT_FUNCTIONS_SQL)).rows) await client.query("SELECT create_distributed_function($1)", [f]);
    // Citus plans a statement over distributed tables with its parameters' values (a generic
    // plan with parameters is refused: "could not create distributed plan"): the functions that
    // force generic plans on plain Postgres use custom plans here (every migrate re-creates them),
    // but for those that read Citus's own catalog alone (CITUS_GENERIC_FUNCTIONS).
    const { rows: generic } = await client.query<{ f: string }>(
      `SELECT p.oid::regprocedure::text AS f FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND 'plan_cache_mode=force_generic_plan' = ANY (p.proconfig) AND NOT p.proname = ANY ($1::text[]) ORDER BY 1`,
      [CITUS_GENERIC_FUNCTIONS],
    );
    for (const { f } of generic) await client.query(`ALTER FUNCTION ${f} SET plan_cache_mode = force_custom_plan`);
    if (pendingRef.length + pendingDist.length > 0) {
      // The foreign keys of and to the tables still to lay out, dropped and added back below.
      const all = [...pendingRef, ...pendingDist];
      const { rows: fks } = await client.query<{ t: string; name: string; def: string }>(
        `SELECT conrelid::regclass::text AS t, conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
          WHERE contype = 'f' AND (conrelid::regclass::text = ANY($1::text[]) OR confrelid::regclass::text = ANY($1::text[])) ORDER BY conrelid, conname`,
        [all],
      );
      for (const k of fks) await client.query(`ALTER TABLE ${client.escapeIdentifier(k.t)} DROP CONSTRAINT ${client.escapeIdentifier(k.name)}`);
      for (const t of pendingRef) {
        await client.query("SELECT create_reference_table($1)", [t]);
        madeReference.push(t);
      }
      for (const t of pendingDist) {
        const colocate = t === "delegations" ? "default" : "delegations";
        await client.query("SELECT create_distributed_table($1, 'agent_id', colocate_with => $2)", [t, colocate]);
        distributed.push(t);
      }
      for (const k of fks) await client.query(`ALTER TABLE ${client.escapeIdentifier(k.t)} ADD CONSTRAINT ${client.escapeIdentifier(k.name)} ${k.def}`);
    }
    // The spend functions of one agent run on its worker (see CITUS_DELEGATED_FUNCTIONS).
    for (const f of CITUS_DELEGATED_FUNCTIONS) {
      const { rows: d } = await client.query<{ i: number | null }>(
        "SELECT distribution_argument_index AS i FROM pg_dist_object WHERE classid = 'pg_proc'::regclass AND objid = $1::regprocedure",
        [f],
      );
      if (d[0]?.i !== 0) await client.query("SELECT create_distributed_function($1, 'p_agent', colocate_with => 'delegations', force_delegation => true)", [f]);
    }
    await client.query("COMMIT");
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    throw e;
  }
  return { citus, coordinator: true, madeReference, distributed, partitionedDecisions };
}

/**
 * Whether the database of `pool` has the citus extension, as a synchronous reading: false until
 * the first look-up answers (asked at once, and again at most every 10 s while it has not
 * answered: a process may start before its database). What the spends' group commit reads to
 * write one agent's spends per transaction (src/verify/commit/queues.ts).
 */
export function citusFlag(pool: { query: (sql: string) => Promise<{ rows: { c: boolean }[] }> }): () => boolean {
  let value = false;
  let known = false;
  let askedAt = -Infinity;
  return () => {
    if (!known && Date.now() - askedAt >= 10_000) {
      askedAt = Date.now();
      pool.query("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS c").then(
        (r) => {
          value = r.rows[0]?.c === true;
          known = true;
        },
        () => {},
      );
    }
    return value;
  };
}

/** The node group holding each agent's `delegations` shard (and so all its co-located shards). */
const NODE_OF_AGENTS_SQL = `SELECT a, p.groupid::text AS g FROM unnest($1::text[]) AS a
  JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('public.delegations'::regclass, a)`;

/** How long `citusNodeOf` keeps what it read before it asks again (a shard moved since is found within about this bound). */
export const CITUS_NODE_OF_TTL_MS = 60_000;
/** Most agents `citusNodeOf` keeps. */
const CITUS_NODE_OF_MAX = 100_000;

/**
 * On a Citus cluster, a synchronous reading of the node group (worker) that holds an agent's
 * shards: what the spends' group commit groups a batch by (src/verify/commit/queues.ts), so
 * that one transaction holds the spends of every agent of one worker, and stays a one-worker
 * transaction. An agent not known yet is its own group (`agent:<id>`), and its node is asked
 * for at once (agents asked together in one statement); what was read is kept
 * CITUS_NODE_OF_TTL_MS (at most 100,000 agents), then asked again agent by agent as each is
 * wanted, the reading before still answered until the new one is in (a stale reading between
 * expiries, not every agent its own group at once). A reading made stale by a shard move only
 * costs speed: the spend SQL checks that a batch's agents are on one node before it sends the
 * batch to that node whole (sql/functions/writ_spend_read_citus.sql), and otherwise reads and
 * writes it statement by statement from the coordinator.
 */
export function citusNodeOf(pool: { query: (sql: string, values: unknown[]) => Promise<{ rows: { a: string; g: string }[] }> }): (agent: string) => string {
  let known = new Map<string, string>();
  // What was read before the last expiry: answered while the agent is asked again, so an expiry
  // never sends every agent's spends through the coordinator at once (each agent its own group).
  let stale = new Map<string, string>();
  const wanted = new Set<string>();
  let asking = new Set<string>();
  let readAt = Date.now();
  const ask = () => {
    if (asking.size > 0 || wanted.size === 0) return;
    asking = new Set([...wanted].slice(0, 1000));
    for (const a of asking) wanted.delete(a);
    pool
      .query(NODE_OF_AGENTS_SQL, [[...asking]])
      .then(
        (r) => {
          for (const row of r.rows) if (known.size < CITUS_NODE_OF_MAX) known.set(row.a, row.g);
        },
        () => {},
      )
      .finally(() => {
        asking = new Set();
        ask();
      });
  };
  return (agent) => {
    if (Date.now() - readAt >= CITUS_NODE_OF_TTL_MS) {
      stale = known;
      known = new Map();
      readAt = Date.now();
    }
    const g = known.get(agent);
    if (g !== undefined) return `node:${g}`;
    if (!asking.has(agent)) wanted.add(agent);
    ask();
    const before = stale.get(agent);
    return before !== undefined ? `node:${before}` : `agent:${agent}`;
  };
}

/** WRIT_CITUS_DIRECT: whether a Citus data plane sends one worker's spend transactions to that worker itself. */
export type CitusDirectMode = "on" | "off";

/** WRIT_CITUS_DIRECT of `env` (default `on`); an unknown value throws (it names the variable and what it accepts). */
export function citusDirectFromEnv(env: NodeJS.ProcessEnv): CitusDirectMode {
  const raw = env.WRIT_CITUS_DIRECT?.trim();
  if (raw === undefined || raw === "" || raw === "on") return "on";
  if (raw === "off") return "off";
  throw new Error(`WRIT_CITUS_DIRECT must be on or off, not ${JSON.stringify(raw.slice(0, 40))}`);
}

/** The active primary of each worker group, read on the coordinator (empty elsewhere). */
const WORKER_NODES_SQL = `SELECT groupid::text AS g, nodename AS host, nodeport AS port FROM pg_catalog.pg_dist_node
  WHERE groupid <> 0 AND noderole = 'primary' AND isactive AND (SELECT groupid FROM pg_catalog.pg_dist_local_group) = 0`;

/** How long `CitusDirect` keeps the worker list it read (a worker's new address is found within this bound, or at its first failed connection). */
export const CITUS_DIRECT_NODES_TTL_MS = 30_000;

/** The pool shape CitusDirect reads the coordinator through and takes its connection settings from. */
type CoordinatorPool = Pool;

/**
 * The direct path of a Citus data plane (docs/scale.md, "The spend transaction on the worker"):
 * a pool per worker group, so that the spends' group commit sends a batch of one worker's agents
 * (`citusNodeOf`'s `node:<group>`) straight to that worker, with no coordinator in the
 * transaction. Citus (metadata synced to every worker, its default) runs a distributed
 * statement on any node that has the metadata, locally when the shards are local: there the
 * spend functions (writ_spend_read_agent, writ_spend_write_agent and the worker's own, writ_citus_local_fn)
 * run as they do when the coordinator delegates them, and a statement whose shard is not local
 * (a shard moved since `citusNodeOf` looked) is sent by that worker through Citus, as the
 * coordinator would (correct, slower).
 *
 * - `poolFor(group)` answers synchronously: the worker's pool once its address is known
 *   (`pg_dist_node`, read through the coordinator's pool at the first call and again every
 *   CITUS_DIRECT_NODES_TTL_MS or after a connection to a worker failed), else undefined (the
 *   caller goes through the coordinator). Pools are opened lazily, one per group, each bounded
 *   by the coordinator pool's size, with the coordinator pool's user, password, database, TLS,
 *   `options` (WRIT_SYNCHRONOUS_COMMIT) at the host and port `pg_dist_node` names; a group
 *   whose address changed gets a new pool (the old one is ended).
 * - A worker that is down fails only its own transactions (as "database unavailable": 503);
 *   its pool makes new connections when it is back, without a restart.
 * - `end()` ends every worker pool (the process's shutdown).
 */
export class CitusDirect {
  private readonly pools = new Map<string, { addr: string; pool: Pool }>();
  private nodes = new Map<string, { host: string; port: number }>();
  private readAt = -Infinity;
  private reading = false;
  private ended = false;

  constructor(
    private readonly coordinator: CoordinatorPool,
    private readonly opts: { applicationName?: string; onError?: (err: Error) => void } = {},
  ) {}

  /** The pool of worker group `group` (`node:<groupid>` as `citusNodeOf` names it), or undefined. */
  poolFor(group: string): Pool | undefined {
    if (this.ended) return undefined;
    if (Date.now() - this.readAt >= CITUS_DIRECT_NODES_TTL_MS) this.refresh();
    if (!group.startsWith("node:")) return undefined;
    const g = group.slice(5);
    const node = this.nodes.get(g);
    if (!node) return undefined;
    const addr = `${node.host}:${node.port}`;
    const have = this.pools.get(g);
    if (have && have.addr === addr) return have.pool;
    if (have) void have.pool.end().catch(() => {});
    const pool = this.open(node);
    this.pools.set(g, { addr, pool });
    return pool;
  }

  /** Reads the worker list again (at most one read at a time). */
  refresh(): void {
    if (this.reading || this.ended) return;
    this.reading = true;
    this.readAt = Date.now();
    this.coordinator.query<{ g: string; host: string; port: number }>(WORKER_NODES_SQL).then(
      (r) => {
        this.nodes = new Map(r.rows.map((n) => [n.g, { host: n.host, port: Number(n.port) }]));
        this.reading = false;
      },
      () => {
        this.reading = false;
        this.readAt = -Infinity;
      },
    );
  }

  /** A transaction on a worker's pool failed: the worker list is read again at the next call (a worker's new address). */
  failed(): void {
    this.readAt = -Infinity;
  }

  /** Ends every worker pool. */
  async end(): Promise<void> {
    this.ended = true;
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(all.map((p) => p.pool.end().catch(() => {})));
  }

  private open(node: { host: string; port: number }): Pool {
    // The coordinator pool's connection settings, resolved by pg as a client resolves them.
    const base = new pg.Client(this.coordinator.options) as unknown as { user?: string; password?: string; database?: string; ssl?: ClientConfig["ssl"] };
    const o = this.coordinator.options as pg.PoolConfig;
    const pool = new pg.Pool({
      host: node.host,
      port: node.port,
      user: base.user,
      password: base.password,
      database: base.database,
      ...(base.ssl ? { ssl: base.ssl } : {}),
      ...(o.options ? { options: o.options } : {}),
      max: o.max ?? 10,
      connectionTimeoutMillis: o.connectionTimeoutMillis ?? 5000,
      idleTimeoutMillis: 30_000,
      application_name: this.opts.applicationName ?? "writ-direct",
    });
    pool.on("error", (err) => {
      this.readAt = -Infinity;
      this.opts.onError?.(err);
    });
    pool.on("connect", (client) => client.on("error", () => {}));
    return pool;
  }
}
