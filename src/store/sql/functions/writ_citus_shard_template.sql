-- The text of this Citus node's spend functions (writ_citus_local_fn makes them from this text):
-- `read_fn` (writ_spend_read_agent's batch) or `write_fn` (writ_spend_write_agent's rows), each
-- ONE function for every shard group placed on the node, a branch per group ({branches}: `read`
-- or `write`, once per group, its statements naming the group's shards: {delegations},
-- {agreements}, … the shard tables, `{…_pkey}` their primary keys' names, {revocations} the
-- reference table's copy on this node). The batch's agents go group by group (in the order of
-- their shard ids, each group's agents in id order: the lock order of every Citus path,
-- src/store/ledger/index.ts), each group through its branch: every statement is static, planned
-- by Postgres alone once per session and kept (PL/pgSQL; generic plans from the first call, as
-- writ_spend_read and writ_spend_write force them on plain Postgres: every look-up is an index
-- probe by key), instead of Citus planning it afresh as a distributed query and then planning its
-- shard query again; and no statement is made and planned per group or per call (as a dynamic
-- call of a function per group was: a worker's statement executions cost it more than a spend's
-- rows, docs/scale.md).
-- `read` answers row for row as writ_spend_read_citus_here does for the spends of p_agents (the
-- batch's agents of this shard group: their agreements are locked agent by agent, then ONE
-- statement reads them all) in a batch that locks no delegation (the only batches
-- writ_spend_read_agent sends here): such a spend declares neither its delegation nor a chain, so
-- it reads no other agent's rows (which a function Citus runs for the coordinator may not read):
-- of a stored chain, it lists the links stored with it by id. `write` writes the rows p_rows of
-- the group's agents as writ_spend_write_citus_here writes them (writ_spend_write_citus sends
-- only rows whose answer is their agreement's agent's), as the set-based statements of
-- writ_spend_write. IMMUTABLE: a function's name carries a digest of this text
-- (writ_citus_local_fn), so a changed text makes new functions.
CREATE OR REPLACE FUNCTION writ_citus_shard_template(p_kind text)
RETURNS text
LANGUAGE sql IMMUTABLE AS $tpl$
SELECT CASE p_kind WHEN 'read_fn' THEN $read_fn$
CREATE OR REPLACE FUNCTION {fn}(p_batch_agents text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spend jsonb, existing jsonb, released boolean, decided boolean,
               existing_request_hash text, imported boolean, delegation_chain text[], ancestors jsonb, agreement_agent text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
#variable_conflict use_column
DECLARE g record; p_agents text[]; v_agent text;
BEGIN
  FOR g IN SELECT get_shard_id_for_distribution_column('public.delegations'::regclass, x.ag) AS sid, array_agg(x.ag ORDER BY x.ag) AS agents
           FROM unnest(p_batch_agents) AS x(ag) GROUP BY 1 ORDER BY 1 LOOP
    p_agents := g.agents;
{branches}
    ELSE RAISE EXCEPTION 'writ: shard % is not placed on this node', g.sid;
    END IF;
  END LOOP;
END $fn$
$read_fn$ WHEN 'write_fn' THEN $write_fn$
CREATE OR REPLACE FUNCTION {fn}(p_batch jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $fn$
#variable_conflict use_column
DECLARE g record; p_rows jsonb;
BEGIN
  FOR g IN SELECT get_shard_id_for_distribution_column('public.delegations'::regclass, x.e->>'ag') AS sid, jsonb_agg(x.e ORDER BY x.k) AS rows
           FROM jsonb_array_elements(p_batch) WITH ORDINALITY AS x(e, k) GROUP BY 1 ORDER BY 1 LOOP
    p_rows := g.rows;
{branches}
    ELSE RAISE EXCEPTION 'writ: shard % is not placed on this node', g.sid;
    END IF;
  END LOOP;
END $fn$
$write_fn$ WHEN 'read' THEN $read$
      FOREACH v_agent IN ARRAY p_agents LOOP
        PERFORM 1 FROM {agreements} a WHERE a.agent_id = v_agent AND a.agreement_id = ANY (p_agreements) ORDER BY a.agreement_id FOR NO KEY UPDATE;
      END LOOP;
      RETURN QUERY
      SELECT s.i, a.agreement_id IS NOT NULL, CASE WHEN a.agreement_id IS NULL THEN NULL ELSE coalesce(h.ledger_sequence, 0) END, h.ledger_head, a.status, a.revoked_at IS NOT NULL, a.delegation_id,
        CASE WHEN s.rev IS NOT NULL AND a.revision = s.rev THEN s.currency
          ELSE (SELECT m->>'currency' FROM jsonb_array_elements(a.record->'mandates') m WHERE m->>'intent_id' = s.intent_id LIMIT 1) END,
        coalesce(dd.revoked, false),
        coalesce((SELECT true FROM {revocations} r WHERE r.agreement_id = s.agreement_id AND r.agent_id = s.ag LIMIT 1), false),
        coalesce((SELECT t.spent_minor FROM {agreement_spend} t WHERE t.agent_id = s.ag AND t.agreement_id = s.agreement_id AND t.intent_id = s.intent_id), 0)::text,
        (CASE WHEN s.parent THEN coalesce((SELECT sum(t.spent_minor) FROM {agreement_spend} t WHERE t.agent_id = s.ag AND t.agreement_id = s.agreement_id AND t.currency = s.currency), 0)
          ELSE 0 END)::text,
        CASE WHEN NOT s.del OR a.delegation_id IS NULL THEN NULL
          ELSE (SELECT coalesce(jsonb_agg(jsonb_build_array(t.currency, t.spent_minor::text)), '[]'::jsonb)
                FROM {agreements} b JOIN {agreement_spend} t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id
                WHERE b.agent_id = s.ag AND t.agent_id = s.ag AND b.delegation_id = a.delegation_id) END,
        le.entry,
        coalesce(le.released, false),
        (s.agent_id IS NOT NULL AND coalesce((SELECT true FROM {verify_decisions} v WHERE v.agent_id = s.ag AND v.agent_id = s.agent_id AND v.action_id = s.action_id), false)),
        le.request_hash,
        coalesce(le.imported, false),
        dd.chain_ids,
        -- A stored chain's links that were stored with it (chain_agents), by id alone: no chain is
        -- declared on this path, so the spend is refused (CHAIN_BROKEN) when there is any, whatever
        -- the links hold, and allowed with nothing above it to count when there is none.
        CASE WHEN cardinality(dd.chain_ids) > 0 THEN
          (SELECT jsonb_agg(jsonb_build_object('id', u.id) ORDER BY u.n) FROM unnest(dd.chain_agents, dd.chain_ids) WITH ORDINALITY AS u(ag, id, n) WHERE u.ag IS NOT NULL) END,
        a.agent_id
      FROM jsonb_to_recordset(p_spends) AS s(i int, ag text, agreement_id text, intent_id text, action_id text, currency text, agent_id text, parent boolean, del boolean, rev bigint)
      LEFT JOIN LATERAL (SELECT * FROM {agreements} x WHERE x.agent_id = s.ag AND x.agreement_id = s.agreement_id LIMIT 1) a ON true
      LEFT JOIN LATERAL (SELECT y.ledger_sequence, y.ledger_head FROM {agreement_ledger_heads} y WHERE y.agent_id = s.ag AND y.agreement_id = s.agreement_id LIMIT 1) h ON true
      LEFT JOIN LATERAL (SELECT z.revoked_at IS NOT NULL AS revoked, z.chain_ids, z.chain_agents FROM {delegations} z WHERE z.agent_id = s.ag AND z.delegation_id = a.delegation_id LIMIT 1) dd ON true
      LEFT JOIN LATERAL (SELECT (array_agg(e.entry) FILTER (WHERE e.outcome = 'allowed'))[1] AS entry,
                                (array_agg(e.request_hash) FILTER (WHERE e.outcome = 'allowed'))[1] AS request_hash,
                                bool_or(e.outcome IN ('failed', 'voided', 'expired', 'released')) AS released, bool_or(e.imported) AS imported
                         FROM {ledger_entries} e WHERE e.agent_id = s.ag AND e.agreement_id = s.agreement_id AND e.action_id = s.action_id) le ON true
      WHERE s.ag = ANY (p_agents);
$read$ WHEN 'write' THEN $write$
      RETURN QUERY
      WITH r AS MATERIALIZED (SELECT * FROM jsonb_to_recordset(p_rows) AS r(ag text, a text, e jsonb, m bigint, g text, h text, d jsonb)),
      entries AS (
        INSERT INTO {ledger_entries} (agent_id, agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash, request_hash)
        SELECT r.ag, r.a, (r.e->>'sequence')::int, r.e, r.e->>'action_id', 'allowed', r.e->>'intent_id', r.e->>'currency', r.m, r.e->>'entry_hash', r.e->>'prev_entry_hash', r.h
        FROM r
      ), holds AS (
        INSERT INTO {ledger_open_holds} (agent_id, agreement_id, action_id, held_at)
        SELECT r.ag, r.a, r.e->>'action_id', now() FROM r
        ON CONFLICT DO NOTHING
      ), heads AS (
        INSERT INTO {agreement_ledger_heads} AS x (agent_id, agreement_id, ledger_sequence, ledger_head)
        SELECT DISTINCT ON (r.ag, r.a) r.ag, r.a, (r.e->>'sequence')::int, r.e->>'entry_hash'
        FROM r ORDER BY r.ag, r.a, (r.e->>'sequence')::int DESC
        ON CONFLICT ON CONSTRAINT {agreement_ledger_heads_pkey}
        DO UPDATE SET ledger_sequence = EXCLUDED.ledger_sequence, ledger_head = EXCLUDED.ledger_head, updated_at = EXCLUDED.updated_at
      ), totals AS (
        INSERT INTO {agreement_spend} AS t (agent_id, agreement_id, intent_id, currency, spent_minor)
        SELECT r.ag, r.a, r.e->>'intent_id', min(r.e->>'currency'), sum(r.m)::bigint
        FROM r GROUP BY r.ag, r.a, r.e->>'intent_id'
        ON CONFLICT ON CONSTRAINT {agreement_spend_pkey} DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor
      ), stored AS (
        INSERT INTO {verify_decisions} AS v (agent_id, action_id, agreement_id, request_hash, decision)
        SELECT r.g, r.e->>'action_id', r.a, r.h, r.d
        FROM r WHERE r.g IS NOT NULL
        ON CONFLICT ON CONSTRAINT {verify_decisions_pkey} DO NOTHING
        RETURNING v.agent_id, v.action_id
      )
      SELECT s.agent_id, s.action_id FROM stored s;
$write$ END
$tpl$;
