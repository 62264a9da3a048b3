-- Trigger of agreements (migrations/0100_change_notify.sql): notifies the old and the new row's
-- agent. The agreements trigger leaves out updates that only move the ledger head. (The agents
-- table has its own, writ_agent_row_changed: migrations/0350_citus_notices.sql.)
-- Silent while a writer on a Citus cluster sends the notices from the coordinator's session
-- (writ.notices_from, SET LOCAL there and propagated to the workers: src/store/delegations-citus.ts),
-- since a NOTIFY on a worker fails a two-phase commit; never set on plain Postgres.
CREATE OR REPLACE FUNCTION writ_agents_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('writ.notices_from', true) = 'coordinator' THEN RETURN NULL; END IF;
  IF TG_OP <> 'INSERT' THEN PERFORM writ_notify_agent(OLD.agent_id); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM writ_notify_agent(NEW.agent_id); END IF;
  RETURN NULL;
END $$;
