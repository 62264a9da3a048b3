-- writ_spend_write_citus_here for rows of agents whose shards are on one worker (each row's
-- answer its agreement's agent's), as a distributed function of the first of them, p_agent
-- (src/store/citus.ts): called from writ_spend_write_citus, Citus runs it on the worker holding
-- p_agent's shards (in the spend's transaction, force_delegation). There the rows of the agents
-- of one shard group are written by that group's function (writ_citus_shard_fn 'write':
-- set-based statements on the local shards, naming no agent, planned once per session by
-- Postgres alone), one call per shard group; when an agent's shards are not on this node, all
-- rows by writ_spend_write_citus_here, through Citus.
CREATE OR REPLACE FUNCTION writ_spend_write_agent(p_agent text, p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = auto AS $$
#variable_conflict use_column
DECLARE v_agents text[] := ARRAY(SELECT DISTINCT x.ag FROM jsonb_to_recordset(p_rows) AS x(ag text) ORDER BY 1);
  v_fns text[] := writ_citus_shard_fns('write', v_agents);
  v_fn text;
BEGIN
  IF v_fns IS NULL THEN
    RETURN QUERY SELECT * FROM writ_spend_write_citus_here(p_rows);
    RETURN;
  END IF;
  IF cardinality(v_agents) = 1 THEN
    RETURN QUERY EXECUTE format('SELECT * FROM public.%I($1, $2)', v_fns[1]) USING v_agents[1], p_rows;
    RETURN;
  END IF;
  -- One call per shard group (its statements are set-based and name no agent): the rows of
  -- the agents whose shards it holds, in the order given.
  FOR v_fn IN SELECT f FROM unnest(v_fns) WITH ORDINALITY AS u(f, k) GROUP BY f ORDER BY min(k) LOOP
    RETURN QUERY EXECUTE format('SELECT * FROM public.%I($1, $2)', v_fn)
      USING v_agents[array_position(v_fns, v_fn)],
        (SELECT jsonb_agg(e.x ORDER BY e.k) FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS e(x, k)
          WHERE e.x->>'ag' = ANY (ARRAY(SELECT v_agents[j] FROM generate_subscripts(v_fns, 1) AS j WHERE v_fns[j] = v_fn)));
  END LOOP;
END $$;
