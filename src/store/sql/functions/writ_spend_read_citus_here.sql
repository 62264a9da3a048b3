-- writ_spend_read on a Citus cluster, run statement by statement from where it is called (writ_spend_read_citus chooses; its caller, which documents the reads and the locks; the
-- same answer, row for row). Every statement names one agent as a constant (a PL/pgSQL
-- variable, planned with its value: the function forces custom plans, also when it is called
-- from a function that forces generic ones, as a worker's spend functions do), so Citus routes
-- it to that agent's worker (a router plan, one task):
-- - per agent of the batch (agents by shard group, then id; a Citus batch holds one agent's spends:
--   src/verify/commit/queues.ts), its delegation rows are locked as writ_spend_read locks them,
--   then its agreement rows, then its spends are read in one statement;
-- - what may be another agent's is read before that statement, by its own key: a stored
--   ancestor's row (chain_agents), and a subtree's spend (writ_subtree_spend, which reads every
--   agent's delegations below the ancestor: a multi-shard read, only for a delegation with
--   descendants), kept in v_anc / v_sub by the spend's place i.
-- Rows come agent by agent (the caller orders them by i).
CREATE OR REPLACE FUNCTION writ_spend_read_citus_here(p_delegations text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spend jsonb, existing jsonb, released boolean, decided boolean,
               existing_request_hash text, imported boolean, delegation_chain text[], ancestors jsonb, agreement_agent text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_custom_plan AS $$
#variable_conflict use_column
DECLARE v_agent text; k record; u record; p record; v_anc jsonb; v_sub jsonb; v_one jsonb; v_locks jsonb := '[]'; v_pushed text[];
BEGIN
  -- Delegation rows of every agent first, in the order (depth, id) across the batch: each
  -- spend's delegation by its agreement's agent, its ancestors by the agents its row stored.
  FOR k IN SELECT DISTINCT s.ag, s.did FROM jsonb_to_recordset(p_spends) AS s(ag text, did text) WHERE s.ag IS NOT NULL AND s.did IS NOT NULL LOOP
    FOR u IN SELECT z.agent_id, z.delegation_id, cardinality(z.chain_ids) AS depth, z.chain_ids, z.chain_agents FROM delegations z
             WHERE z.agent_id = k.ag AND z.delegation_id = k.did LOOP
      v_locks := v_locks || jsonb_build_array(jsonb_build_array(u.agent_id, u.delegation_id, u.depth))
        || (SELECT coalesce(jsonb_agg(jsonb_build_array(c.ag, c.id, c.n - 1)), '[]'::jsonb)
            FROM unnest(u.chain_agents, u.chain_ids) WITH ORDINALITY AS c(ag, id, n) WHERE c.ag IS NOT NULL);
    END LOOP;
  END LOOP;
  FOR k IN SELECT DISTINCT e->>0 AS agent_id, e->>1 AS delegation_id, (e->>2)::int AS depth FROM jsonb_array_elements(v_locks) e
           WHERE e->>1 = ANY (p_delegations) ORDER BY 3, 2, 1 LOOP
    PERFORM 1 FROM delegations d WHERE d.agent_id = k.agent_id AND d.delegation_id = k.delegation_id FOR NO KEY UPDATE;
  END LOOP;
  -- Agreement rows by shard group (in shard id order), then agent, then id: the lock order of
  -- every Citus path (writ_spend_read_agent reads a group's agents in one call).
  FOR v_agent IN SELECT x.ag FROM (SELECT DISTINCT s.ag FROM jsonb_to_recordset(p_spends) AS s(ag text) WHERE s.ag IS NOT NULL) x
                 ORDER BY get_shard_id_for_distribution_column('public.delegations'::regclass, x.ag), x.ag LOOP
    PERFORM 1 FROM agreements a WHERE a.agent_id = v_agent AND a.agreement_id = ANY (p_agreements) ORDER BY a.agreement_id FOR NO KEY UPDATE;
  END LOOP;
  -- The pushed revocations (a reference table) in a statement of their own: a statement naming a
  -- reference table and an agent's shards is refused in a function Citus runs on the worker
  -- (writ_spend_read_agent: each statement there must be of the agent's co-location group).
  v_pushed := ARRAY(SELECT DISTINCT r.agreement_id FROM revocations r WHERE r.agreement_id = ANY (p_agreements));
  FOR v_agent IN SELECT DISTINCT coalesce(s.ag, '') FROM jsonb_to_recordset(p_spends) AS s(ag text) ORDER BY 1 LOOP
    -- What may be another agent's: each spend's stored ancestors and subtree spend.
    v_anc := '{}'; v_sub := '{}';
    FOR k IN
      SELECT s.i, z.chain_ids, z.chain_agents, z.has_descendants, a.delegation_id, s.del
      FROM jsonb_to_recordset(p_spends) AS s(i int, ag text, agreement_id text, del boolean)
      JOIN agreements a ON a.agent_id = v_agent AND a.agreement_id = s.agreement_id
      JOIN delegations z ON z.agent_id = v_agent AND z.delegation_id = a.delegation_id
      WHERE coalesce(s.ag, '') = v_agent AND (cardinality(z.chain_ids) > 0 OR (s.del AND z.has_descendants))
    LOOP
      IF k.del AND k.has_descendants THEN v_sub := v_sub || jsonb_build_object(k.i::text, writ_subtree_spend(v_agent, k.delegation_id)); END IF;
      IF cardinality(k.chain_ids) > 0 THEN
        v_one := NULL;
        FOR u IN SELECT x.ag, x.id FROM unnest(k.chain_agents, k.chain_ids) AS x(ag, id) WHERE x.ag IS NOT NULL LOOP
          FOR p IN SELECT d.delegation_id, d.agent_id, d.record, d.revoked_at, cardinality(d.chain_ids) AS depth FROM delegations d
                   WHERE d.agent_id = u.ag AND d.delegation_id = u.id LOOP
            v_one := coalesce(v_one, '[]'::jsonb) || jsonb_build_array(
              jsonb_build_object('id', p.delegation_id, 'currency', p.record->'scope'->>'currency', 'cumulative', p.record->'scope'->'cumulative_maximum',
                                 'revoked', p.revoked_at IS NOT NULL, 'depth', p.depth)
              || CASE WHEN (p.record->'scope'->'cumulative_maximum') IS NOT NULL THEN jsonb_build_object('spend', writ_subtree_spend(p.agent_id, p.delegation_id)) ELSE '{}'::jsonb END);
          END LOOP;
        END LOOP;
        IF v_one IS NOT NULL THEN
          v_one := (SELECT jsonb_agg(e - 'depth' ORDER BY (e->>'depth')::int) FROM jsonb_array_elements(v_one) e);
        END IF;
        v_anc := v_anc || jsonb_build_object(k.i::text, coalesce(v_one, 'null'::jsonb));
      END IF;
    END LOOP;
    RETURN QUERY
    SELECT s.i, a.agreement_id IS NOT NULL, CASE WHEN a.agreement_id IS NULL THEN NULL ELSE coalesce(h.ledger_sequence, 0) END, h.ledger_head, a.status, a.revoked_at IS NOT NULL, a.delegation_id,
      CASE WHEN s.rev IS NOT NULL AND a.revision = s.rev THEN s.currency
        ELSE (SELECT m->>'currency' FROM jsonb_array_elements(a.record->'mandates') m WHERE m->>'intent_id' = s.intent_id LIMIT 1) END,
      coalesce(dd.revoked, false),
      s.agreement_id = ANY (v_pushed),
      coalesce((SELECT t.spent_minor FROM agreement_spend t WHERE t.agent_id = v_agent AND t.agreement_id = s.agreement_id AND t.intent_id = s.intent_id), 0)::text,
      (CASE WHEN s.parent THEN coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t WHERE t.agent_id = v_agent AND t.agreement_id = s.agreement_id AND t.currency = s.currency), 0)
        ELSE 0 END)::text,
      CASE WHEN NOT s.del OR a.delegation_id IS NULL THEN NULL
        WHEN coalesce(dd.has_descendants, false) THEN v_sub->(s.i::text)
        ELSE (SELECT coalesce(jsonb_agg(jsonb_build_array(t.currency, t.spent_minor::text)), '[]'::jsonb)
              FROM agreements b JOIN agreement_spend t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id
              WHERE b.agent_id = v_agent AND t.agent_id = v_agent AND b.delegation_id = a.delegation_id) END,
      le.entry,
      coalesce(le.released, false),
      (s.agent_id IS NOT NULL AND coalesce((SELECT true FROM verify_decisions v WHERE v.agent_id = v_agent AND v.agent_id = s.agent_id AND v.action_id = s.action_id), false)),
      le.request_hash,
      coalesce(le.imported, false),
      dd.chain_ids,
      CASE WHEN cardinality(dd.chain_ids) > 0 THEN nullif(v_anc->(s.i::text), 'null'::jsonb) END,
      a.agent_id
    FROM jsonb_to_recordset(p_spends) AS s(i int, ag text, did text, agreement_id text, intent_id text, action_id text, currency text, agent_id text, parent boolean, del boolean, rev bigint)
    LEFT JOIN LATERAL (SELECT * FROM agreements x WHERE x.agent_id = v_agent AND x.agreement_id = s.agreement_id LIMIT 1) a ON true
    LEFT JOIN LATERAL (SELECT y.ledger_sequence, y.ledger_head FROM agreement_ledger_heads y WHERE y.agent_id = v_agent AND y.agreement_id = s.agreement_id LIMIT 1) h ON true
    LEFT JOIN LATERAL (SELECT z.revoked_at IS NOT NULL AS revoked, z.chain_ids, z.has_descendants FROM delegations z WHERE z.agent_id = v_agent AND z.delegation_id = a.delegation_id LIMIT 1) dd ON true
    LEFT JOIN LATERAL (SELECT (array_agg(e.entry) FILTER (WHERE e.outcome = 'allowed'))[1] AS entry,
                              (array_agg(e.request_hash) FILTER (WHERE e.outcome = 'allowed'))[1] AS request_hash,
                              bool_or(e.outcome IN ('failed', 'voided', 'expired', 'released')) AS released, bool_or(e.imported) AS imported
                       FROM ledger_entries e WHERE e.agent_id = v_agent AND e.agreement_id = s.agreement_id AND e.action_id = s.action_id) le ON true
    WHERE coalesce(s.ag, '') = v_agent;
  END LOOP;
END $$;
