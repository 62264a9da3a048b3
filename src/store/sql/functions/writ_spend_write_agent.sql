-- writ_spend_write_citus_here for rows of agent p_agent only, as a distributed function of the
-- agent (src/store/citus.ts): called from writ_spend_write_citus, Citus runs it on the worker
-- holding p_agent's shards (in the spend's transaction, force_delegation).
CREATE OR REPLACE FUNCTION writ_spend_write_agent(p_agent text, p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY SELECT * FROM writ_spend_write_citus_here(p_rows);
END $$;
