-- Trigger of agents (migrations/0350_citus_notices.sql): notifies the old and the new row's
-- agent, from the coordinator's copy only when agents is a Citus reference table
-- (writ_notify_here). (The agreements' trigger, writ_agents_changed, notifies from wherever its
-- row is: a per-agent table's shard is written in a one-worker transaction.)
CREATE OR REPLACE FUNCTION writ_agent_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT writ_notify_here() THEN RETURN NULL; END IF;
  IF TG_OP <> 'INSERT' THEN PERFORM writ_notify_agent(OLD.agent_id); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM writ_notify_agent(NEW.agent_id); END IF;
  RETURN NULL;
END $$;
