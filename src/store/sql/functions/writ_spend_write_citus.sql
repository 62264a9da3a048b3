-- writ_spend_write on a Citus cluster (its caller documents the writes; the same rows). Rows
-- whose answers are their agreement's agent's, of agents whose shards are on one worker, are
-- written by writ_spend_write_agent, a distributed function of the first agent
-- (src/store/citus.ts), which Citus runs whole on that worker (see writ_spend_read_citus.sql);
-- any other rows statement by statement from here (writ_spend_write_citus_here). On a worker
-- (writ serve's direct path), such rows of agents whose shards are all there go straight to the
-- worker's write function (writ_citus_local_fn), as writ_spend_write_agent would send them.
-- Plans: `auto` (kept per session after the first calls), not the custom plans the caller
-- forces; the call Citus delegates to the agent's worker is a dynamic statement, planned with
-- the agent's value on every call as the delegation needs.
CREATE OR REPLACE FUNCTION writ_spend_write_citus(p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = auto AS $$
#variable_conflict use_column
DECLARE v_agents text[] := ARRAY(SELECT DISTINCT x.ag FROM jsonb_to_recordset(p_rows) AS x(ag text) ORDER BY 1);
  v_agent text := v_agents[1];
  v_answers_own boolean := NOT EXISTS (SELECT 1 FROM jsonb_to_recordset(p_rows) AS x(ag text, g text) WHERE x.g IS NOT NULL AND x.g <> x.ag);
  v_fn text;
BEGIN
  IF v_answers_own AND (SELECT l.groupid FROM pg_catalog.pg_dist_local_group l) <> 0 THEN
    v_fn := writ_citus_local_fn('write', v_agents);
    IF v_fn IS NOT NULL THEN
      RETURN QUERY EXECUTE format('SELECT * FROM public.%I($1)', v_fn) USING p_rows;
      RETURN;
    END IF;
  END IF;
  IF cardinality(v_agents) >= 1 AND array_position(v_agents, NULL) IS NULL
     AND v_answers_own
     -- On a worker (writ serve's direct path) writ_citus_local_fn finds any agent whose
     -- shards are not here: no look-up of the placements first.
     AND (cardinality(v_agents) = 1 OR (SELECT l.groupid FROM pg_catalog.pg_dist_local_group l) <> 0 OR writ_citus_one_node(v_agents)) THEN
    RETURN QUERY EXECUTE 'SELECT * FROM writ_spend_write_agent($1, $2)' USING v_agent, p_rows;
  ELSE
    RETURN QUERY SELECT * FROM writ_spend_write_citus_here(p_rows);
  END IF;
END $$;
