-- writ_spend_write_citus_here for rows of agents whose shards are on one worker (each row's
-- answer its agreement's agent's), as a distributed function of the first of them, p_agent
-- (src/store/citus.ts): called from writ_spend_write_citus, Citus runs it on the worker holding
-- p_agent's shards (in the spend's transaction, force_delegation). There the rows are written by
-- this node's write function (writ_citus_local_fn 'write': one call for the batch, shard group by
-- shard group, each group's rows by set-based statements on its local shards, naming no agent,
-- planned once per session by Postgres alone); when an agent's shards are not on this node, all
-- rows by writ_spend_write_citus_here, through Citus.
CREATE OR REPLACE FUNCTION writ_spend_write_agent(p_agent text, p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = auto AS $$
#variable_conflict use_column
DECLARE v_fn text := writ_citus_local_fn('write', ARRAY(SELECT DISTINCT x.ag FROM jsonb_to_recordset(p_rows) AS x(ag text) ORDER BY 1));
BEGIN
  IF v_fn IS NULL THEN
    RETURN QUERY SELECT * FROM writ_spend_write_citus_here(p_rows);
    RETURN;
  END IF;
  RETURN QUERY EXECUTE format('SELECT * FROM public.%I($1)', v_fn) USING p_rows;
END $$;
