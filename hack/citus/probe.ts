/**
 * `npx tsx hack/citus/probe.ts`: what Citus says to Writ's schema (docs/scale.md, "What Citus
 * refuses in the current schema"), on a throw-away cluster (./cluster.ts). After Writ's
 * migrations it first tries to distribute the per-agent tables and make the shared ones
 * reference tables AS THEY ARE (printing each refusal; with citus.enable_unsafe_triggers a
 * reference table `orgs` is accepted, and its first write then fails with "cannot PREPARE a
 * transaction that has executed LISTEN, UNLISTEN, or NOTIFY", not repeated here as it would
 * turn the linked tables into Citus local tables), then, with the migrations' keys (agent_id
 * first) and the change-notice trigger functions reduced to their own row and to the
 * coordinator, tries again: distribution, router plans, row locks with and without
 * the agent, NOTIFY from workers and inside a two-phase commit, the spend read's functions, a
 * time-partitioned distributed table. Prints OK or FAIL with Citus's message, detail and hint.
 * Nothing of it is Writ's schema: what Writ does about each finding is in docs/scale.md ("What
 * Citus refuses, and what the schema and SQL do about it") and src/store/citus.ts.
 */
import pg from "pg";
import { startCitusCluster } from "./cluster.js";
import { migrate } from "../../src/store/migrate.js";
const cl = await startCitusCluster({ parameters: { "citus.shard_count": 4, fsync: "off" } });
try {
  // The layout step is left out: the tables are tried as the migrations leave them.
  process.env.WRIT_CITUS = "off";
  await migrate(cl.url());
  await cl.withClient(async (c) => {
    const q = async (label: string, sql: string) => {
      try {
        const r = (await c.query(sql)) as pg.QueryResult | pg.QueryResult[];
        console.log("OK  ", label, Array.isArray(r) ? "" : JSON.stringify(r.rows?.slice(0, 12)).slice(0, 1500));
      } catch (e) {
        const x = e as { message: string; detail?: string; hint?: string };
        console.log("FAIL", label, "|", x.message, "|", x.detail ?? "", "|", x.hint ?? "");
        await c.query("ROLLBACK").catch(() => {});
      }
    };
    // As the schema is today.
    for (const t of ["delegations", "agreements", "agreement_ledger_heads", "ledger_entries", "agreement_spend", "mandates"])
      await q(`today: distribute ${t}`, `SELECT create_distributed_table('${t}', 'agent_id')`);
    for (const t of ["orgs", "api_keys", "agents"]) await q(`today: reference ${t}`, `SELECT create_reference_table('${t}')`);
    await q("reset", "RESET citus.enable_unsafe_triggers");
    // The keys are the migrations' (agent_id first: 0320_agent_keys.sql, 0322_record_claims.sql).
    await q(
      "shard-safe trigger functions",
      `
      CREATE OR REPLACE FUNCTION writ_delegations_changed() RETURNS trigger LANGUAGE plpgsql AS $f$
      BEGIN
        IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('writ_changes', 'agent:' || OLD.agent_id); END IF;
        IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('writ_changes', 'agent:' || NEW.agent_id); END IF;
        RETURN NULL;
      END $f$;
      CREATE OR REPLACE FUNCTION writ_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $f$
      BEGIN
        IF citus_is_coordinator() THEN PERFORM pg_notify('writ_changes', 'keys'); END IF;
        RETURN NULL;
      END $f$;`,
    );
    for (const t of ["delegations", "agreements", "agreement_ledger_heads", "ledger_entries", "agreement_spend", "verify_decisions", "mandates"])
      await q(
        `distribute ${t}`,
        `SET citus.enable_unsafe_triggers = on; SELECT create_distributed_table('${t}', 'agent_id', colocate_with => ${t === "delegations" ? "'default'" : "'delegations'"})`,
      );
    for (const t of ["orgs", "api_keys", "issuer_keys", "ack_keys", "agents"])
      await q(`reference ${t}`, `SET citus.enable_unsafe_triggers = on; SELECT create_reference_table('${t}')`);
    await q(
      "mandates -> issuer_keys FK (distributed -> reference)",
      "ALTER TABLE mandates ADD CONSTRAINT m_ik FOREIGN KEY (issuer_org_id, issuer_kid) REFERENCES issuer_keys (org_id, kid)",
    );
    await q("citus_tables", "SELECT table_name::text, citus_table_type, distribution_column, colocation_id FROM citus_tables ORDER BY 1");
    await q("insert delegation a1", `INSERT INTO delegations (delegation_id, agent_id, principal, status, record) VALUES ('d1','a1','{}','active','{}')`);
    await q(
      "insert delegation a2 (child of d1, other agent)",
      `INSERT INTO delegations (delegation_id, agent_id, principal, status, record, parent_delegation_id, chain_ids, chain_agents) VALUES ('d2','a2','{}','active','{}','d1','{d1}','{a1}')`,
    );
    await q(
      "shard of a1, a2",
      "SELECT get_shard_id_for_distribution_column('delegations','a1') a1, get_shard_id_for_distribution_column('delegations','a2') a2, (SELECT nodeport FROM citus_shards WHERE shardid = get_shard_id_for_distribution_column('delegations','a1')) p1, (SELECT nodeport FROM citus_shards WHERE shardid = get_shard_id_for_distribution_column('delegations','a2')) p2",
    );
    await q("router: lock one agent's delegation", "EXPLAIN SELECT 1 FROM delegations WHERE agent_id = 'a1' AND delegation_id = 'd1' FOR NO KEY UPDATE");
    await q("lock without agent_id", "BEGIN; SELECT 1 FROM delegations WHERE delegation_id = ANY('{d1,d2}') FOR NO KEY UPDATE; ROLLBACK");
    await q(
      "lock two agents' rows, agent named",
      "BEGIN; SELECT 1 FROM delegations WHERE (agent_id, delegation_id) IN (('a1','d1'),('a2','d2')) FOR NO KEY UPDATE; ROLLBACK",
    );
    await q(
      "lock two agents' rows, one statement each",
      "BEGIN; SELECT 1 FROM delegations WHERE agent_id = 'a1' AND delegation_id = 'd1' FOR NO KEY UPDATE; SELECT 1 FROM delegations WHERE agent_id = 'a2' AND delegation_id = 'd2' FOR NO KEY UPDATE; ROLLBACK",
    );
    await q(
      "update one agent's row (trigger NOTIFY on the worker)",
      "UPDATE delegations SET generation = generation + 1 WHERE agent_id = 'a1' AND delegation_id = 'd1'",
    );
    await q(
      "update two agents' rows in one transaction (2PC + NOTIFY)",
      "BEGIN; UPDATE delegations SET generation = generation + 1 WHERE agent_id = 'a1' AND delegation_id = 'd1'; UPDATE delegations SET generation = generation + 1 WHERE agent_id = 'a2' AND delegation_id = 'd2'; COMMIT",
    );
    await q("update org (reference, statement trigger NOTIFY)", "UPDATE orgs SET name = name");
    await q("spend read", 'SELECT * FROM writ_spend_read(\'{d1}\', \'{}\', \'[{"i": 0, "ag": "a1", "did": "d1", "agreement_id": "x"}]\'::jsonb)');
    await q("subtree spend", "SELECT * FROM writ_subtree_spend('a1', 'd1')");
    await q(
      "partitioned verify_decisions by time: distributed partitioned table",
      `
      CREATE TABLE vd_p (agent_id text NOT NULL, action_id text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (agent_id, action_id, created_at)) PARTITION BY RANGE (created_at);
      CREATE TABLE vd_p_2026_11 PARTITION OF vd_p FOR VALUES FROM ('2026-11-01') TO ('2026-12-01');
      SELECT create_distributed_table('vd_p', 'agent_id', colocate_with => 'delegations');
      INSERT INTO vd_p VALUES ('a1','x', '2026-11-27');
      DROP TABLE vd_p_2026_11;`,
    );
  });
  // Worker-side NOTIFY: a LISTEN on each worker sees the change of an agent on its shard.
  const listeners = await Promise.all(
    cl.workers.map(async (w) => {
      const c = new pg.Client({ connectionString: cl.nodeUrl(w) });
      await c.connect();
      const got: string[] = [];
      c.on("notification", (n) => got.push(`${w.name}:${n.payload}`));
      await c.query("LISTEN writ_changes");
      return { c, got };
    }),
  );
  const coord = new pg.Client({ connectionString: cl.url() });
  await coord.connect();
  const cgot: string[] = [];
  coord.on("notification", (n) => cgot.push(`coordinator:${n.payload}`));
  await coord.query("LISTEN writ_changes");
  await cl.withClient(async (c) => {
    await c.query("UPDATE delegations SET generation = generation + 1 WHERE agent_id = 'a1' AND delegation_id = 'd1'");
    await c.query("UPDATE orgs SET name = name");
  });
  await new Promise((r) => setTimeout(r, 500));
  console.log("notices", JSON.stringify([...listeners.flatMap((l) => l.got), ...cgot]));
  for (const l of listeners) await l.c.end();
  await coord.end();
} finally {
  await cl.stop();
}
