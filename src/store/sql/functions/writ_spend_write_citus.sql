-- writ_spend_write on a Citus cluster (its caller documents the writes; the same rows). Rows of
-- one agent whose answers are that agent's too are written by writ_spend_write_agent, a
-- distributed function of the agent (src/store/citus.ts), which Citus runs whole on the agent's
-- worker (see writ_spend_read_citus.sql); any other rows statement by statement from here
-- (writ_spend_write_citus_here).
CREATE OR REPLACE FUNCTION writ_spend_write_citus(p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_custom_plan AS $$
#variable_conflict use_column
DECLARE v_agents text[] := ARRAY(SELECT DISTINCT u FROM jsonb_to_recordset(p_rows) AS x(ag text, g text), LATERAL unnest(ARRAY[x.ag, coalesce(x.g, x.ag)]) AS u);
  v_agent text := v_agents[1];
BEGIN
  IF cardinality(v_agents) = 1 AND v_agent IS NOT NULL THEN
    RETURN QUERY SELECT * FROM writ_spend_write_agent(v_agent, p_rows);
  ELSE
    RETURN QUERY SELECT * FROM writ_spend_write_citus_here(p_rows);
  END IF;
END $$;
