-- writ_spend_read on a Citus cluster (its caller documents the reads and the locks; the same
-- answer, row for row). A batch that names no delegation (nothing of another agent to read: no
-- stored ancestor, no subtree), of agents whose shards are on one worker (one agent, or
-- writ_citus_one_node: the group commit groups spends by worker, src/verify/commit/queues.ts),
-- is read by writ_spend_read_agent, a distributed function of its first agent
-- (src/store/citus.ts: distribution argument p_agent, co-located with delegations,
-- force_delegation), which Citus runs whole on that worker: one round trip from the
-- coordinator, its statements run there on the local shards. Any other batch is read statement
-- by statement from here (writ_spend_read_citus_here). On a worker (writ serve's direct path), a
-- batch that names no delegation, of agents whose shards are all there, goes straight to the
-- worker's read function (writ_citus_local_fn), as writ_spend_read_agent would send it: one
-- dynamic statement and one function call fewer.
-- Plans: `auto` (kept per session after the first calls), not the custom plans the caller
-- forces; the call Citus delegates to the agent's worker is a dynamic statement, planned with
-- the agent's value on every call as the delegation needs.
CREATE OR REPLACE FUNCTION writ_spend_read_citus(p_delegations text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spend jsonb, existing jsonb, released boolean, decided boolean,
               existing_request_hash text, imported boolean, delegation_chain text[], ancestors jsonb, agreement_agent text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = auto AS $$
DECLARE v_agents text[] := ARRAY(SELECT DISTINCT s.ag FROM jsonb_to_recordset(p_spends) AS s(ag text) ORDER BY 1);
  v_agent text := v_agents[1];
  v_fn text;
BEGIN
  IF cardinality(p_delegations) = 0 AND (SELECT l.groupid FROM pg_catalog.pg_dist_local_group l) <> 0 THEN
    v_fn := writ_citus_local_fn('read', v_agents);
    IF v_fn IS NOT NULL THEN
      RETURN QUERY EXECUTE format('SELECT * FROM public.%I($1, $2, $3)', v_fn) USING v_agents, p_agreements, p_spends;
      RETURN;
    END IF;
  END IF;
  IF cardinality(p_delegations) = 0 AND cardinality(v_agents) >= 1 AND array_position(v_agents, NULL) IS NULL
     -- On a worker (writ serve's direct path) writ_citus_local_fn finds any agent whose
     -- shards are not here: no look-up of the placements first.
     AND (cardinality(v_agents) = 1 OR (SELECT l.groupid FROM pg_catalog.pg_dist_local_group l) <> 0 OR writ_citus_one_node(v_agents)) THEN
    RETURN QUERY EXECUTE 'SELECT * FROM writ_spend_read_agent($1, $2, $3, $4)' USING v_agent, p_delegations, p_agreements, p_spends;
  ELSE
    RETURN QUERY SELECT * FROM writ_spend_read_citus_here(p_delegations, p_agreements, p_spends);
  END IF;
END $$;
