-- The text of a function of one agent's shard group on a Citus worker (writ_citus_shard_fn
-- makes it from this text): `read` (writ_spend_read_agent's batch) or `write`
-- (writ_spend_write_agent's rows). Its statements name the worker's shards of the agent
-- ({delegations}, {agreements}, … : the shard tables, `{…_pkey}` their primary keys' names,
-- {revocations} the reference table's copy on this node), so Citus's planner is not involved:
-- Postgres plans each statement once per session and keeps the plan (PL/pgSQL; generic plans
-- from the first call, as writ_spend_read and writ_spend_write force them on plain Postgres:
-- every look-up is an index probe by key), instead of Citus planning it afresh as a
-- distributed query and then planning its shard query again.
-- `read` answers row for row as writ_spend_read_citus_here does for a batch of p_agent's
-- spends that locks no delegation (the only batches writ_spend_read_agent sends here; its rows
-- of a batch of several agents are p_agent's): such a spend declares neither its delegation
-- nor a chain, so it reads no other agent's rows (which a function Citus runs for the
-- coordinator may not read): of a stored chain, it lists the links stored with it by id. `write` writes the
-- rows writ_spend_write_citus_here writes for rows all of p_agent (writ_spend_write_citus sends
-- only those), as the set-based statements of writ_spend_write. IMMUTABLE: the function's name
-- carries a digest of this text (writ_citus_shard_fn), so a changed text makes new functions.
CREATE OR REPLACE FUNCTION writ_citus_shard_template(p_kind text)
RETURNS text
LANGUAGE sql IMMUTABLE AS $tpl$
SELECT CASE p_kind WHEN 'read' THEN $read$
CREATE FUNCTION {fn}(p_agent text, p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spend jsonb, existing jsonb, released boolean, decided boolean,
               existing_request_hash text, imported boolean, delegation_chain text[], ancestors jsonb, agreement_agent text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM {agreements} a WHERE a.agent_id = p_agent AND a.agreement_id = ANY (p_agreements) ORDER BY a.agreement_id FOR NO KEY UPDATE;
  RETURN QUERY
  SELECT s.i, a.agreement_id IS NOT NULL, CASE WHEN a.agreement_id IS NULL THEN NULL ELSE coalesce(h.ledger_sequence, 0) END, h.ledger_head, a.status, a.revoked_at IS NOT NULL, a.delegation_id,
    CASE WHEN s.rev IS NOT NULL AND a.revision = s.rev THEN s.currency
      ELSE (SELECT m->>'currency' FROM jsonb_array_elements(a.record->'mandates') m WHERE m->>'intent_id' = s.intent_id LIMIT 1) END,
    coalesce(dd.revoked, false),
    coalesce((SELECT true FROM {revocations} r WHERE r.agreement_id = s.agreement_id AND r.agent_id = p_agent LIMIT 1), false),
    coalesce((SELECT t.spent_minor FROM {agreement_spend} t WHERE t.agent_id = p_agent AND t.agreement_id = s.agreement_id AND t.intent_id = s.intent_id), 0)::text,
    (CASE WHEN s.parent THEN coalesce((SELECT sum(t.spent_minor) FROM {agreement_spend} t WHERE t.agent_id = p_agent AND t.agreement_id = s.agreement_id AND t.currency = s.currency), 0)
      ELSE 0 END)::text,
    CASE WHEN NOT s.del OR a.delegation_id IS NULL THEN NULL
      ELSE (SELECT coalesce(jsonb_agg(jsonb_build_array(t.currency, t.spent_minor::text)), '[]'::jsonb)
            FROM {agreements} b JOIN {agreement_spend} t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id
            WHERE b.agent_id = p_agent AND t.agent_id = p_agent AND b.delegation_id = a.delegation_id) END,
    le.entry,
    coalesce(le.released, false),
    (s.agent_id IS NOT NULL AND coalesce((SELECT true FROM {verify_decisions} v WHERE v.agent_id = p_agent AND v.agent_id = s.agent_id AND v.action_id = s.action_id), false)),
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
  LEFT JOIN LATERAL (SELECT * FROM {agreements} x WHERE x.agent_id = p_agent AND x.agreement_id = s.agreement_id LIMIT 1) a ON true
  LEFT JOIN LATERAL (SELECT y.ledger_sequence, y.ledger_head FROM {agreement_ledger_heads} y WHERE y.agent_id = p_agent AND y.agreement_id = s.agreement_id LIMIT 1) h ON true
  LEFT JOIN LATERAL (SELECT z.revoked_at IS NOT NULL AS revoked, z.chain_ids, z.chain_agents FROM {delegations} z WHERE z.agent_id = p_agent AND z.delegation_id = a.delegation_id LIMIT 1) dd ON true
  LEFT JOIN LATERAL (SELECT (array_agg(e.entry) FILTER (WHERE e.outcome = 'allowed'))[1] AS entry,
                            (array_agg(e.request_hash) FILTER (WHERE e.outcome = 'allowed'))[1] AS request_hash,
                            bool_or(e.outcome IN ('failed', 'voided', 'expired', 'released')) AS released, bool_or(e.imported) AS imported
                     FROM {ledger_entries} e WHERE e.agent_id = p_agent AND e.agreement_id = s.agreement_id AND e.action_id = s.action_id) le ON true
  WHERE s.ag = p_agent;
END $fn$
$read$ WHEN 'write' THEN $write$
CREATE FUNCTION {fn}(p_agent text, p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $fn$
#variable_conflict use_column
BEGIN
  INSERT INTO {ledger_entries} (agent_id, agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash, request_hash)
  SELECT r.ag, r.a, (r.e->>'sequence')::int, r.e, r.e->>'action_id', 'allowed', r.e->>'intent_id', r.e->>'currency', r.m, r.e->>'entry_hash', r.e->>'prev_entry_hash', r.h
  FROM jsonb_to_recordset(p_rows) AS r(ag text, a text, e jsonb, m bigint, h text);
  INSERT INTO {ledger_open_holds} (agent_id, agreement_id, action_id, held_at)
  SELECT r.ag, r.a, r.e->>'action_id', now() FROM jsonb_to_recordset(p_rows) AS r(ag text, a text, e jsonb)
  ON CONFLICT DO NOTHING;
  INSERT INTO {agreement_ledger_heads} AS x (agent_id, agreement_id, ledger_sequence, ledger_head)
  SELECT DISTINCT ON (r.ag, r.a) r.ag, r.a, (r.e->>'sequence')::int, r.e->>'entry_hash'
  FROM jsonb_to_recordset(p_rows) AS r(ag text, a text, e jsonb) ORDER BY r.ag, r.a, (r.e->>'sequence')::int DESC
  ON CONFLICT ON CONSTRAINT {agreement_ledger_heads_pkey}
  DO UPDATE SET ledger_sequence = EXCLUDED.ledger_sequence, ledger_head = EXCLUDED.ledger_head, updated_at = EXCLUDED.updated_at;
  INSERT INTO {agreement_spend} AS t (agent_id, agreement_id, intent_id, currency, spent_minor)
  SELECT r.ag, r.a, r.e->>'intent_id', min(r.e->>'currency'), sum(r.m)::bigint
  FROM jsonb_to_recordset(p_rows) AS r(ag text, a text, e jsonb, m bigint) GROUP BY r.ag, r.a, r.e->>'intent_id'
  ON CONFLICT ON CONSTRAINT {agreement_spend_pkey} DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor;
  RETURN QUERY
  WITH stored AS (
    INSERT INTO {verify_decisions} AS v (agent_id, action_id, agreement_id, request_hash, decision)
    SELECT r.g, r.e->>'action_id', r.a, r.h, r.d
    FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, g text, h text, d jsonb) WHERE r.g IS NOT NULL
    ON CONFLICT ON CONSTRAINT {verify_decisions_pkey} DO NOTHING
    RETURNING v.agent_id, v.action_id
  )
  SELECT s.agent_id, s.action_id FROM stored s;
END $fn$
$write$ END
$tpl$;
