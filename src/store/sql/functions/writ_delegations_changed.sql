-- Trigger of delegations: notifies the old and the new row's agent. Every agreement bound to a
-- delegation is the delegation's agent's (foreign key (agent_id, delegation_id)), so that one
-- notice reaches them too. It touches only its own row, as a trigger of a Citus shard must
-- (migrations/0510_citus_shard_safe_triggers.sql).
-- Silent while a writer on a Citus cluster sends the notices from the coordinator's session
-- (writ.notices_from, SET LOCAL there and propagated to the workers: src/store/delegations-citus.ts),
-- since a NOTIFY on a worker fails a two-phase commit; never set on plain Postgres.
CREATE OR REPLACE FUNCTION writ_delegations_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A row only marked as having descendants (delegations.ts, markAncestors: generation kept)
  -- changes nothing a cache holds: no notice (on a Citus cluster that update is on the
  -- ancestor's worker, inside the child's two-phase commit, where a NOTIFY is refused).
  IF TG_OP = 'UPDATE' AND NEW.has_descendants AND NOT OLD.has_descendants AND NEW.generation = OLD.generation THEN RETURN NULL; END IF;
  IF current_setting('writ.notices_from', true) = 'coordinator' THEN RETURN NULL; END IF;
  IF TG_OP <> 'INSERT' THEN PERFORM writ_notify_agent(OLD.agent_id); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM writ_notify_agent(NEW.agent_id); END IF;
  RETURN NULL;
END $$;
