-- The shard-group functions of kind p_kind ('read' or 'write', writ_citus_shard_fn) of the agents
-- p_agents on this Citus node, in their order; NULL when the list is empty, names no agent (a
-- NULL) or holds an agent whose shards are not on this node (the caller then runs its statements
-- through Citus). Called by writ_spend_read_agent and writ_spend_write_agent.
CREATE OR REPLACE FUNCTION writ_citus_shard_fns(p_kind text, p_agents text[])
RETURNS text[]
LANGUAGE plpgsql VOLATILE AS $$
DECLARE v_fns text[] := '{}';
  v_fn text;
  n int;
BEGIN
  IF cardinality(p_agents) = 0 OR array_position(p_agents, NULL) IS NOT NULL THEN RETURN NULL; END IF;
  FOR n IN 1 .. cardinality(p_agents) LOOP
    v_fn := writ_citus_shard_fn(p_kind, p_agents[n]);
    IF v_fn IS NULL THEN RETURN NULL; END IF;
    v_fns := v_fns || v_fn;
  END LOOP;
  RETURN v_fns;
END $$;
