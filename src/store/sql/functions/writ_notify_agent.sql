-- A change notice for the data plane's caches (src/store/changes.ts): `agent:<agent_id>` on the
-- channel writ_changes, sent when the transaction commits (identical notices fold into one).
CREATE OR REPLACE FUNCTION writ_notify_agent(p_agent_id text) RETURNS void LANGUAGE sql AS $$
  SELECT pg_notify('writ_changes', 'agent:' || p_agent_id) WHERE p_agent_id IS NOT NULL
$$;
