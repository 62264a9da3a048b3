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
import type { ClientBase } from "pg";
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
    // force generic plans on plain Postgres use custom plans here (every migrate re-creates them).
    const { rows: generic } = await client.query<{ f: string }>(
      `SELECT p.oid::regprocedure::text AS f FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND 'plan_cache_mode=force_generic_plan' = ANY (p.proconfig) ORDER BY 1`,
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

/** How long `citusNodeOf` keeps what it read (a shard moved since is found within this bound). */
export const CITUS_NODE_OF_TTL_MS = 60_000;

/**
 * On a Citus cluster, a synchronous reading of the node group (worker) that holds an agent's
 * shards: what the spends' group commit groups a batch by (src/verify/commit/queues.ts), so
 * that one transaction holds the spends of every agent of one worker, and stays a one-worker
 * transaction. An agent not known yet is its own group (`agent:<id>`), and its node is asked
 * for at once (agents asked together in one statement); what was read is kept
 * CITUS_NODE_OF_TTL_MS (at most 100,000 agents). A reading made stale by a shard move only
 * costs speed: the spend SQL checks that a batch's agents are on one node before it sends the
 * batch to that node whole (sql/functions/writ_spend_read_citus.sql), and otherwise reads and
 * writes it statement by statement from the coordinator.
 */
export function citusNodeOf(pool: { query: (sql: string, values: unknown[]) => Promise<{ rows: { a: string; g: string }[] }> }): (agent: string) => string {
  const known = new Map<string, string>();
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
          for (const row of r.rows) if (known.size < 100_000) known.set(row.a, row.g);
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
      known.clear();
      readAt = Date.now();
    }
    const g = known.get(agent);
    if (g !== undefined) return `node:${g}`;
    if (!asking.has(agent)) wanted.add(agent);
    ask();
    return `agent:${agent}`;
  };
}
