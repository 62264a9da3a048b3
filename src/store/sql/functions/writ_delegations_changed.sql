-- Trigger of delegations: notifies the delegation's own agent and the agents of every agreement
-- bound to it.
CREATE OR REPLACE FUNCTION writ_delegations_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM writ_notify_agent(OLD.agent_id); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM writ_notify_agent(NEW.agent_id); END IF;
  FOR r IN SELECT DISTINCT agent_id FROM agreements
           WHERE delegation_id = CASE WHEN TG_OP = 'DELETE' THEN OLD.delegation_id ELSE NEW.delegation_id END LOOP
    PERFORM writ_notify_agent(r.agent_id);
  END LOOP;
  RETURN NULL;
END $$;
