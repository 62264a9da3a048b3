-- Trigger of agreement_spend when a total goes down or disappears (a released spend): notifies
-- the agreement's agent, since a cached total that is too high would refuse a payment the
-- budget allows. A spend (a higher total) is not notified: the spend transaction re-checks
-- under its lock (docs/verify.md, "Caches").
CREATE OR REPLACE FUNCTION writ_spend_released() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- On a Citus worker the release sends it from the coordinator instead (writ_chain_spend_release).
  IF writ_notify_here() THEN PERFORM writ_notify_agent(OLD.agent_id); END IF;
  RETURN NULL;
END $$;
